/**
 * The typed failures of `TaskClient` operations: what the caller did that cannot work, as
 * opposed to the store's or the wire's troubles.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"

/** The call names a server the client was not configured with. @since 0.1.0 */
export class UnknownServer extends Schema.TaggedError<UnknownServer>()("UnknownServer", {
  server: Schema.String,
}) {}

/** No row for this key in this scope. @since 0.1.0 */
export class UnknownKey extends Schema.TaggedError<UnknownKey>()("UnknownKey", {
  scope: Schema.String,
  key: Schema.String,
}) {}

/**
 * The key exists for a different call (another tool, server or arguments). Keys name one call;
 * reusing one for another call would silently return the wrong result.
 *
 * @since 0.1.0
 */
export class KeyReused extends Schema.TaggedError<KeyReused>()("KeyReused", {
  key: Schema.String,
  reason: Schema.String,
}) {}

/**
 * An idempotency key or scope that cannot name a row: empty, longer than 512 characters, or
 * holding control characters.
 *
 * @since 0.1.0
 */
export class InvalidKey extends Schema.TaggedError<InvalidKey>()("InvalidKey", {
  what: Schema.Literal("key", "scope"),
  reason: Schema.String,
}) {}

/** `reissue` or `abandon` of a call that is not in doubt. @since 0.1.0 */
export class NotInDoubt extends Schema.TaggedError<NotInDoubt>()("NotInDoubt", {
  key: Schema.String,
  status: Schema.String,
}) {}

/**
 * `reissue` of an in-doubt call that cannot be sent again: its arguments were kept only as a
 * hash (`storeArguments: "hash"`), so there is nothing to send. Decide it with `abandon`, or
 * make the call again under a new key.
 *
 * @since 0.2.0
 */
export class CannotReissue extends Schema.TaggedError<CannotReissue>()("CannotReissue", {
  key: Schema.String,
  reason: Schema.Literal("arguments_not_stored"),
}) {
  override get message(): string {
    return `${this.key} cannot be sent again: its arguments were stored as a hash only`
  }
}
