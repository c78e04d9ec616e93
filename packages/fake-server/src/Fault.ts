/**
 * The faults a fake server injects, and when: a rule matches requests (by method, tool, count or
 * seeded chance) and names what goes wrong (a dropped connection, an HTTP status, latency, a
 * malformed or wrong-shaped answer, a restart, skewed timestamps). Part of a `Config`, which
 * re-exports every name here.
 *
 * @since 0.4.0
 */
import * as Schema from "effect/Schema"
import { Json } from "./Json.js"

const optional = Schema.optional

/**
 * @since 0.1.0
 * @category models
 */
export const FaultMatch = Schema.Struct({
  /** JSON-RPC method(s) the rule applies to (default: any). */
  method: optional(Schema.Union(Schema.String, Schema.Array(Schema.String))),
  /** For `tools/call`: the tool name. */
  tool: optional(Schema.String),
  /** Fire on these matching requests only (1-based count of requests this rule matched). */
  nth: optional(Schema.Union(Schema.Number, Schema.Array(Schema.Number))),
  /** Fire with this probability, drawn from the seeded generator. */
  probability: optional(Schema.Number),
  /** Fire at most this many times. */
  times: optional(Schema.Number),
})

/**
 * @since 0.1.0
 * @category models
 */
export interface FaultMatch extends Schema.Schema.Type<typeof FaultMatch> {}

/**
 * @since 0.1.0
 * @category models
 */
export const FaultPhase = Schema.Literal("before", "after")

/**
 * @since 0.1.0
 * @category models
 */
export type FaultPhase = typeof FaultPhase.Type

/**
 * @since 0.1.0
 * @category models
 */
export const WrongShape = Schema.Union(
  Schema.Literal(
    "missing-result-type",
    "unknown-result-type",
    "missing-task-id",
    "unknown-status",
    "result-not-object",
    "string-poll-interval",
    "missing-jsonrpc",
    "wrong-id",
  ),
  Schema.Struct({ replaceResult: Json }),
)

/**
 * @since 0.1.0
 * @category models
 */
export type WrongShape = typeof WrongShape.Type

const phase = optional(FaultPhase)

/**
 * @since 0.1.0
 * @category models
 */
export const Fault = Schema.Union(
  /**
   * Drop the connection. `before`: nothing happens on the server. `after` (the default): the request
   * is fully processed (a `tools/call` creates its task) and then the response is lost.
   */
  Schema.Struct({ kind: Schema.Literal("drop"), phase }),
  /** Answer with this HTTP status (500, 503, 429...), before or after processing. */
  Schema.Struct({
    kind: Schema.Literal("status"),
    status: Schema.Number,
    retryAfter: optional(Schema.Union(Schema.Number, Schema.String)),
    body: optional(Schema.String),
    phase,
  }),
  /**
   * Wait this long (through the injectable `sleep`). `before` (the default): the request waits
   * before the server processes it. `after`: the server processes it at once (a `tools/call`
   * creates its task) and holds the answer back: a late answer, which may arrive after the client
   * gave up.
   */
  Schema.Struct({ kind: Schema.Literal("latency"), ms: Schema.Number, phase }),
  /** Answer with a body that is not valid JSON (after processing unless `before`). */
  Schema.Struct({ kind: Schema.Literal("malformed-json"), phase }),
  /** Process the request, then answer with a result of the wrong shape. */
  Schema.Struct({ kind: Schema.Literal("wrong-shape"), shape: WrongShape }),
  /** Restart the server (losing in-memory tasks unless durable) just before this request. */
  Schema.Struct({ kind: Schema.Literal("restart") }),
  /** Skew the timestamps of this response. */
  Schema.Struct({ kind: Schema.Literal("skew"), ms: Schema.Number }),
)

/**
 * @since 0.1.0
 * @category models
 */
export type Fault = typeof Fault.Type

/**
 * A fault injected when its `when` matches; deterministic by count or by seed.
 *
 * @since 0.1.0
 * @category models
 */
export const FaultRule = Schema.Struct({ when: optional(FaultMatch), fault: Fault })

/**
 * @since 0.1.0
 * @category models
 */
export interface FaultRule extends Schema.Schema.Type<typeof FaultRule> {}
