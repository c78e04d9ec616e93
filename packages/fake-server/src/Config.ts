/**
 * What a fake server does, as data: its tools, how each call runs and ends, expiry, rate limits
 * and the faults it injects on a deterministic schedule. One plain, JSON-serialisable object,
 * which the binary also reads from a file: every type here is derived from a schema, and a file
 * is decoded with it (`decode`), so that a misspelt key is refused instead of silently ignored.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { FaultRule } from "./Fault.js"
import * as Problems from "./internal/configProblems.js"
import { type Outcome, type Progress, RateLimit, Tool, ToolBehaviour } from "./Tool.js"

/**
 * The faults a config can inject (`Fault`), re-exported.
 *
 * @since 0.4.0
 */
export * from "./Fault.js"
/**
 * The tools a config declares (`Tool`), re-exported.
 *
 * @since 0.4.0
 */
export * from "./Tool.js"

const optional = Schema.optional

/**
 * @since 0.1.0
 * @category models
 */
export const Expiry = Schema.Struct({
  /**
   * What `tasks/get` answers once `createdAt + ttlMs` has passed: `reject` (-32602 "expired",
   * the default) or `fail` (a `failed` task, as the spec allows).
   */
  mode: optional(Schema.Literal("reject", "fail")),
  /** Time after expiry at which the task is deleted (then it is simply unknown). Default 60_000. */
  purgeAfterMs: optional(Schema.Number),
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Expiry extends Schema.Schema.Type<typeof Expiry> {}

/**
 * The whole behaviour of a fake server, as one plain (JSON-serialisable) object: the binary reads the
 * same shape from a file. Every knob that can be set per tool can also be set under `defaults`; a
 * tool's own value wins.
 *
 * @since 0.1.0
 * @category models
 */
export const Config = Schema.Struct({
  tools: Schema.propertySignature(Schema.Array(Tool)).annotations({
    missingMessage: () => 'a config needs a "tools" array',
  }),
  /** Values every tool inherits unless it sets its own. */
  defaults: optional(ToolBehaviour),
  /** Seed of every random choice (result shapes, weighted outcomes, probabilistic faults, task ids). */
  seed: optional(Schema.Number),
  /** `serverInfo` advertised in `server/discover` and in result `_meta`. */
  serverInfo: optional(Schema.Struct({ name: Schema.String, version: Schema.String })),
  /** Protocol revisions accepted in `_meta` / `MCP-Protocol-Version` (default: 2026-07-28). */
  supportedVersions: optional(Schema.Array(Schema.String)),
  /**
   * The protocol generation served. `"2025-11-25"`: the same tools, faults, tasks and ledger
   * in that revision's shapes (`initialize` and sessions, `task` on `tools/call`,
   * `CreateTaskResult`, `tasks/get`, `tasks/result`, `tasks/cancel`). `"both"`: each request
   * in the generation it speaks, on one endpoint with one ledger. Default `"2026-07-28"`. A
   * request of a generation the server does not serve gets that generation's answer for an
   * unsupported protocol version.
   */
  generation: optional(Schema.Literal("2026-07-28", "2025-11-25", "both")),
  /**
   * 2025-11-25 only: each question of a task is put on one `tasks/result` stream, never again
   * (a server whose task message queue drops what it delivered, as SDK 1.x's does; a restart
   * does not bring it back). Default false: every `tasks/result` of a task that waits for input
   * carries all its open questions.
   */
  questionsOnce: optional(Schema.Boolean),
  /**
   * Validate the SEP-2243 routing headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`).
   * Default true: a conforming client always sends them.
   */
  validateHeaders: optional(Schema.Boolean),
  /** How expired tasks behave and when they are forgotten. */
  expiry: optional(Expiry),
  /** A global request budget (every MCP POST counts); 429 with `Retry-After` beyond it. */
  rateLimit: optional(RateLimit),
  /** Faults injected on a deterministic schedule. */
  faults: optional(Schema.Array(FaultRule)),
  /** Added to every timestamp the server reports (`createdAt`, `lastUpdatedAt`): a skewed server clock. */
  timestampSkewMs: optional(Schema.Number),
  /**
   * When true, a `tools/call` carrying an idempotency key already seen (in
   * `_meta["io.github.mcp-handles/key"]`) returns the task it created instead of launching again.
   */
  deduplicateByKey: optional(Schema.Boolean),
  /** Path prefix of the non-MCP control endpoints (`GET {prefix}ledger`, ...). Default `/_`. */
  controlPrefix: optional(Schema.String),
  /** Record every request in the ledger (default true; turn off for very long benchmarks). */
  recordRequests: optional(Schema.Boolean),
  /**
   * DNS-rebinding protection: the host names a request's `Host` header and its `Origin` (when
   * present) may name; anything else is refused with HTTP 403. Default: the loopback names
   * (`localhost`, `127.0.0.1`, `[::1]`). Serving on another interface, list its names; `["*"]`
   * turns the check off.
   */
  allowedHosts: optional(Schema.Array(Schema.String)),
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Config extends Schema.Schema.Type<typeof Config> {}

/**
 * A configuration that does not decode: each problem names its path (`tools[0].statusMessage`)
 * and, for a misspelt key, the key meant.
 *
 * @since 0.4.0
 * @category errors
 */
export class InvalidConfig extends Schema.TaggedError<InvalidConfig>()("InvalidConfig", {
  problems: Schema.Array(Schema.String),
}) {
  override get message(): string {
    return this.problems.join("; ")
  }
}

/**
 * Reads a configuration from untrusted data (a parsed JSON file). Strict: a key the schema does
 * not know is a problem, since a silently ignored misspelling (`statusMessage` for
 * `workingMessage`) makes a server that quietly does something else than its author meant.
 *
 * @since 0.4.0
 * @category decoding
 */
export const decode = (input: unknown): Either.Either<Config, InvalidConfig> =>
  Either.mapLeft(
    Schema.decodeUnknownEither(Config, { onExcessProperty: "error", errors: "all" })(input),
    (error) => new InvalidConfig({ problems: Problems.describe(error) }),
  )

/**
 * The value of every knob a configuration leaves unset, in one place.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaults = {
  /** Seed of every random choice. */
  seed: 1,
  serverInfo: { name: "mcp-handles-fake-server", version: "0.1.0" },
  supportedVersions: ["2026-07-28"],
  /** Path prefix of the control endpoints (`GET /_ledger`, ...). */
  controlPrefix: "/_",
  /** `ttlMs` of a task. */
  ttlMs: 3_600_000,
  /** How long an expired task still answers "expired" before it is forgotten. */
  purgeAfterMs: 60_000,
  /** What a call ends with when its tool names no outcome. */
  outcome: { kind: "result", text: "ok" } as Outcome,
  /** Progress of a held direct answer whose tool names none: a quarter of the way at a time. */
  progress: { steps: [0, 25, 50, 75, 100], total: 100 } as Progress,
  /** Host names accepted in `Host` and `Origin` (DNS-rebinding protection): the loopback ones. */
  allowedHosts: ["localhost", "127.0.0.1", "[::1]"] as readonly string[],
} as const
