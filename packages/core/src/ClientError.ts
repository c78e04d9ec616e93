/**
 * The typed failures of `TaskClient` operations: what the caller did that cannot work, as
 * opposed to the store's or the wire's troubles.
 *
 * @since 0.2.0
 */
import * as Data from "effect/Data"
import * as Schema from "effect/Schema"
import { Status } from "./HandleRecord.js"
import type { ServerRequest } from "./ServerRequest.js"

/**
 * The call names a server the client was not configured with.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnknownServer extends Schema.TaggedError<UnknownServer>()("UnknownServer", {
  server: Schema.String,
}) {
  override get message(): string {
    return `the server ${JSON.stringify(this.server)} is not configured on this client`
  }
}

/**
 * No row for this key in this scope.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnknownKey extends Schema.TaggedError<UnknownKey>()("UnknownKey", {
  scope: Schema.String,
  key: Schema.String,
}) {
  override get message(): string {
    return `no call with key ${JSON.stringify(this.key)} in scope ${JSON.stringify(this.scope)}`
  }
}

/**
 * The key exists for a different call (another tool, server or arguments). Keys name one call;
 * reusing one for another call would silently return the wrong result.
 *
 * @since 0.1.0
 * @category errors
 */
export class KeyReused extends Schema.TaggedError<KeyReused>()("KeyReused", {
  key: Schema.String,
  reason: Schema.String,
}) {
  override get message(): string {
    return `key ${JSON.stringify(this.key)} is already used: ${this.reason}`
  }
}

/**
 * An idempotency key or scope that cannot name a row: empty, longer than 512 characters, or
 * holding control characters.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidKey extends Schema.TaggedError<InvalidKey>()("InvalidKey", {
  what: Schema.Literal("key", "scope"),
  reason: Schema.String,
}) {
  override get message(): string {
    return `invalid ${this.what}: ${this.reason}`
  }
}

/**
 * `abandon` of a call that is not in doubt: there is nothing to decide.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotInDoubt extends Schema.TaggedError<NotInDoubt>()("NotInDoubt", {
  key: Schema.String,
  status: Schema.String,
}) {
  override get message(): string {
    return `${this.key} is not in doubt (it is ${this.status}); nothing to decide`
  }
}

/**
 * Why `reissue` refused to send a call again:
 * - `not_in_doubt`: the call is not in doubt (`status` says what it is), so there is nothing to
 *   decide; only an in-doubt call is ever sent twice;
 * - `arguments_not_stored`: the call is in doubt, but its arguments were kept only as a hash
 *   (`storeArguments: "hash"`), so there is nothing to send. Decide it with `abandon`, or make
 *   the call again under a new key.
 *
 * @since 0.2.0
 * @category models
 */
export const CannotReissueReason = Schema.Literal("not_in_doubt", "arguments_not_stored")

/**
 * @since 0.2.0
 * @category models
 */
export type CannotReissueReason = typeof CannotReissueReason.Type

/**
 * `reissue` of a call that cannot be sent again; `reason` says why (see `CannotReissueReason`).
 *
 * @since 0.2.0
 * @category errors
 */
export class CannotReissue extends Schema.TaggedError<CannotReissue>()("CannotReissue", {
  key: Schema.String,
  /** The call's status when it was refused. */
  status: Status,
  reason: CannotReissueReason,
}) {
  override get message(): string {
    return this.reason === "not_in_doubt"
      ? `${this.key} is not in doubt (it is ${this.status}); nothing to decide`
      : `${this.key} cannot be sent again: its arguments were stored as a hash only`
  }
}

/**
 * An answer that does not fit the input request it answers (see `ServerRequest.answerProblems`):
 * nothing was stored or sent, and the request is still open.
 *
 * @since 0.4.0
 * @category errors
 */
export class InvalidAnswer extends Schema.TaggedError<InvalidAnswer>()("InvalidAnswer", {
  key: Schema.String,
  inputKey: Schema.String,
  problems: Schema.Array(Schema.String),
}) {
  override get message(): string {
    return `the answer to ${this.inputKey} of ${this.key} does not fit the request: ${this.problems.join("; ")}`
  }
}

/**
 * Why `answer` stored nothing:
 * - `not_asked`: the call has no open request with this input key (it never asked, or no longer does);
 * - `already_answered`: the key has an answer already; a key is answered once;
 * - `not_waiting`: the call does not wait for input (`status` says what it is).
 *
 * @since 0.4.0
 * @category models
 */
export const CannotAnswerReason = Schema.Literal("not_asked", "already_answered", "not_waiting")

/**
 * @since 0.4.0
 * @category models
 */
export type CannotAnswerReason = typeof CannotAnswerReason.Type

/**
 * @since 0.4.0
 * @category errors
 */
export class CannotAnswer extends Schema.TaggedError<CannotAnswer>()("CannotAnswer", {
  key: Schema.String,
  inputKey: Schema.String,
  status: Status,
  reason: CannotAnswerReason,
}) {
  override get message(): string {
    if (this.reason === "not_asked")
      return `${this.key} has no open input request ${JSON.stringify(this.inputKey)}`
    if (this.reason === "already_answered")
      return `${this.inputKey} of ${this.key} is answered already; a request is answered once`
    return `${this.key} does not wait for input (it is ${this.status})`
  }
}

/**
 * One open input request of a call (see `InputRequired`).
 *
 * @since 0.4.0
 * @category models
 */
export interface OpenRequest {
  readonly inputKey: string
  readonly request: ServerRequest
  /**
   * Why the answer of the handler here does not fit the request (see `InvalidAnswer`); unset
   * when no handler here answers it.
   *
   * @since 0.4.0
   */
  readonly problems?: ReadonlyArray<string> | undefined
}

/**
 * A wait (`settle`, `outcome`) stopped because the call waits for input that no handler here
 * answers: there is no `onInputRequired`, or its answer does not fit the request (`problems` on
 * the request says why; the handler is asked again at each poll, and the call's events report
 * it as `InvalidAnswer`). Without it the wait would last until the task's TTL. The call goes on;
 * answer it with `answer(key, inputKey, response)` from this or any process, then wait again.
 * `{ waitForInput: true }` keeps waiting instead.
 *
 * @since 0.4.0
 * @category errors
 */
export class InputRequired extends Data.TaggedError("InputRequired")<{
  readonly scope: string
  readonly key: string
  readonly requests: ReadonlyArray<OpenRequest>
}> {
  override get message(): string {
    const keys = this.requests.map((r) => r.inputKey).join(", ")
    const answer = `answer it with answer(${JSON.stringify(this.key)}, inputKey, response)`
    const refused = this.requests.filter((r) => r.problems !== undefined)
    if (refused.length === 0)
      return `${this.key} waits for input (${keys}) and no handler here answers it; ${answer}`
    const why = refused.map((r) => `${r.inputKey}: ${(r.problems ?? []).join("; ")}`).join("; ")
    return `${this.key} waits for input (${keys}): the handler's answer does not fit the request (${why}); ${answer}`
  }
}
