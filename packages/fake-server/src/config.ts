import type { Json, JsonObject } from "./json.js"

/**
 * The whole behaviour of a fake server, as one plain (JSON-serialisable) object: the binary reads the
 * same shape from a file. Every knob that can be set per tool can also be set under `defaults`; a
 * tool's own value wins.
 */
export interface FakeServerConfig {
  readonly tools: readonly ToolConfig[]
  /** Values every tool inherits unless it sets its own. */
  readonly defaults?: ToolBehaviour
  /** Seed of every random choice (result shapes, weighted outcomes, probabilistic faults, task ids). */
  readonly seed?: number
  /** `serverInfo` advertised in `server/discover` and in result `_meta`. */
  readonly serverInfo?: { readonly name: string; readonly version: string }
  /** Protocol revisions accepted in `_meta` / `MCP-Protocol-Version` (default: 2026-07-28). */
  readonly supportedVersions?: readonly string[]
  /**
   * Validate the SEP-2243 routing headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`).
   * Default true: a conforming client always sends them.
   */
  readonly validateHeaders?: boolean
  /** How expired tasks behave and when they are forgotten. */
  readonly expiry?: ExpiryConfig
  /** A global request budget (every MCP POST counts); 429 with `Retry-After` beyond it. */
  readonly rateLimit?: RateLimitConfig
  /** Faults injected on a deterministic schedule. */
  readonly faults?: readonly FaultRule[]
  /** Added to every timestamp the server reports (`createdAt`, `lastUpdatedAt`): a skewed server clock. */
  readonly timestampSkewMs?: number
  /**
   * When true, a `tools/call` carrying an idempotency key already seen (in
   * `_meta["mcp-handles/key"]`) returns the task it created instead of launching again.
   */
  readonly deduplicateByKey?: boolean
  /** Path prefix of the non-MCP control endpoints (`GET {prefix}ledger`, ...). Default `/_`. */
  readonly controlPrefix?: string
  /** Record every request in the ledger (default true; turn off for very long benchmarks). */
  readonly recordRequests?: boolean
}

export interface ToolConfig extends ToolBehaviour {
  readonly name: string
  readonly title?: string
  readonly description?: string
  /** JSON Schema of the arguments (default `{ type: "object" }`). */
  readonly inputSchema?: JsonObject
  readonly annotations?: ToolAnnotations
  /**
   * Advertised in `tools/list` as `execution.taskSupport`. `required` makes a call from a client
   * that did not declare the tasks extension fail with -32021. Default: `optional` when the tool can
   * answer with a task, `forbidden` otherwise.
   */
  readonly taskSupport?: "forbidden" | "optional" | "required"
  /**
   * Client capabilities the tool needs (e.g. `{ sampling: {} }`): a call whose `_meta` does not
   * declare them all fails with -32021 naming them.
   */
  readonly requiresClientCapabilities?: JsonObject
}

export interface ToolAnnotations {
  readonly title?: string
  readonly readOnlyHint?: boolean
  readonly destructiveHint?: boolean
  readonly idempotentHint?: boolean
  readonly openWorldHint?: boolean
}

/** Everything about how a call runs; settable per tool or under `defaults`. */
export interface ToolBehaviour {
  /** Whether a call answers with a task, directly, or by a seeded coin toss. Default `task`. */
  readonly shape?: ResultShape
  /** Working time of a task (not counting time blocked on input). Default 0. */
  readonly durationMs?: DurationConfig
  /** `pollIntervalMs` the task advertises; a schedule changes it over the task's life. */
  readonly pollIntervalMs?: PollIntervalConfig
  /** `ttlMs` of a task; `null` for unlimited. Default 3_600_000. */
  readonly ttlMs?: number | null
  /** Input requests raised while the task runs (answered with `tasks/update`). */
  readonly inputSteps?: readonly InputStep[]
  /**
   * Multi round-trip rounds on `tools/call` itself, before anything launches: each round answers
   * `resultType: "input_required"` with these requests and a `requestState`.
   */
  readonly mrtrRounds?: readonly InputRequests[]
  /** What the task (or direct call) ends with. Default: a text result `"ok"`. */
  readonly outcome?: OutcomeConfig
  /** Whether `tasks/cancel` stops the task (default true). An uncancellable task runs to its end. */
  readonly cancellable?: boolean
  /** Delay between a `tasks/cancel` and the task turning `cancelled` (default 0). */
  readonly cancelDelayMs?: number
  /** `statusMessage` reported while working (templated). */
  readonly workingMessage?: string
  /** A per-tool request budget on `tools/call` of this tool. */
  readonly rateLimit?: RateLimitConfig
}

export type ResultShape = "task" | "direct" | { readonly taskProbability: number }

/** A fixed duration, or one read from a numeric argument (`seconds` × 1000, say). */
export type DurationConfig =
  | number
  | { readonly fromArgument: string; readonly multiplier?: number; readonly defaultMs?: number }

/** A constant interval, or a schedule keyed by time since the task was created. */
export type PollIntervalConfig = number | readonly PollIntervalChange[]

export interface PollIntervalChange {
  /** From this much time after creation on... */
  readonly afterMs: number
  /** ...the task advertises this interval (any number: clients must cope with odd ones). */
  readonly pollIntervalMs: number
}

/** Keyed server-to-client requests (`elicitation/create`, `sampling/createMessage`, `roots/list`). */
export type InputRequests = { readonly [key: string]: InputRequest }

export interface InputRequest {
  readonly method: string
  readonly params?: JsonObject
}

export interface InputStep {
  /** Working time after which the task blocks on these requests. */
  readonly atMs: number
  /** Keys must be unique over the task's life (the spec forbids reusing them). */
  readonly requests: InputRequests
  readonly statusMessage?: string
}

export type OutcomeConfig = Outcome | { readonly weighted: readonly WeightedOutcome[] }

export interface WeightedOutcome {
  readonly weight: number
  readonly outcome: Outcome
}

/**
 * How the work ends. Strings inside are templates: `{{args.name}}` reads an argument,
 * `{{inputs.key.content.field}}` an answer, `{{taskId}}` the task id; `{{path|fallback}}` defaults.
 */
export type Outcome =
  | {
      readonly kind: "result"
      /** Shorthand for one text content block. */
      readonly text?: string
      readonly content?: readonly Json[]
      readonly structuredContent?: JsonObject
      /** A tool-level error: still `completed`, with `isError: true`. */
      readonly isError?: boolean
    }
  | {
      /** A JSON-RPC error: the task ends `failed` (a direct call answers with this error). */
      readonly kind: "error"
      readonly code: number
      readonly message: string
      readonly data?: Json
    }

export interface ExpiryConfig {
  /**
   * What `tasks/get` answers once `createdAt + ttlMs` has passed: `reject` (-32602 "expired",
   * the default) or `fail` (a `failed` task, as the spec allows).
   */
  readonly mode?: "reject" | "fail"
  /** Time after expiry at which the task is deleted (then it is simply unknown). Default 60_000. */
  readonly purgeAfterMs?: number
}

export interface RateLimitConfig {
  /** Requests allowed per window. */
  readonly max: number
  readonly windowMs: number
  /** `Retry-After` (seconds) on the 429. Default: the time to the next window, rounded up. */
  readonly retryAfterSeconds?: number
}

/** A fault injected when its `when` matches; deterministic by count or by seed. */
export interface FaultRule {
  readonly when?: FaultMatch
  readonly fault: Fault
}

export interface FaultMatch {
  /** JSON-RPC method(s) the rule applies to (default: any). */
  readonly method?: string | readonly string[]
  /** For `tools/call`: the tool name. */
  readonly tool?: string
  /** Fire on these matching requests only (1-based count of requests this rule matched). */
  readonly nth?: number | readonly number[]
  /** Fire with this probability, drawn from the seeded generator. */
  readonly probability?: number
  /** Fire at most this many times. */
  readonly times?: number
}

export type Fault =
  /**
   * Drop the connection. `before`: nothing happens on the server. `after` (the default): the request
   * is fully processed (a `tools/call` creates its task) and then the response is lost.
   */
  | { readonly kind: "drop"; readonly phase?: FaultPhase }
  /** Answer with this HTTP status (500, 503, 429...), before or after processing. */
  | {
      readonly kind: "status"
      readonly status: number
      readonly retryAfter?: number | string
      readonly body?: string
      readonly phase?: FaultPhase
    }
  /**
   * Wait this long (through the injectable `sleep`). `before` (the default): the request waits
   * before the server processes it. `after`: the server processes it at once (a `tools/call`
   * creates its task) and holds the answer back: a late answer, which may arrive after the client
   * gave up.
   */
  | { readonly kind: "latency"; readonly ms: number; readonly phase?: FaultPhase }
  /** Answer with a body that is not valid JSON (after processing unless `before`). */
  | { readonly kind: "malformed-json"; readonly phase?: FaultPhase }
  /** Process the request, then answer with a result of the wrong shape. */
  | { readonly kind: "wrong-shape"; readonly shape: WrongShape }
  /** Restart the server (losing in-memory tasks unless durable) just before this request. */
  | { readonly kind: "restart" }
  /** Skew the timestamps of this response. */
  | { readonly kind: "skew"; readonly ms: number }

export type FaultPhase = "before" | "after"

export type WrongShape =
  | "missing-result-type"
  | "unknown-result-type"
  | "missing-task-id"
  | "unknown-status"
  | "result-not-object"
  | "string-poll-interval"
  | "missing-jsonrpc"
  | "wrong-id"
  | { readonly replaceResult: Json }
