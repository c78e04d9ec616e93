/**
 * What a fake server does, as data: its tools, how each call runs and ends, expiry, rate limits
 * and the faults it injects on a deterministic schedule. One plain, JSON-serialisable object,
 * which the binary also reads from a file.
 *
 * @since 0.1.0
 */
import type { Json, JsonObject } from "./Json.js"

/**
 * The whole behaviour of a fake server, as one plain (JSON-serialisable) object: the binary reads the
 * same shape from a file. Every knob that can be set per tool can also be set under `defaults`; a
 * tool's own value wins.
 *
 * @since 0.1.0
 * @category models
 */
export interface Config {
  readonly tools: readonly Tool[]
  /** Values every tool inherits unless it sets its own. */
  readonly defaults?: ToolBehaviour | undefined
  /** Seed of every random choice (result shapes, weighted outcomes, probabilistic faults, task ids). */
  readonly seed?: number | undefined
  /** `serverInfo` advertised in `server/discover` and in result `_meta`. */
  readonly serverInfo?: { readonly name: string; readonly version: string } | undefined
  /** Protocol revisions accepted in `_meta` / `MCP-Protocol-Version` (default: 2026-07-28). */
  readonly supportedVersions?: readonly string[] | undefined
  /**
   * The protocol generation served. `"2025-11-25"`: the same tools, faults, tasks and ledger
   * in that revision's shapes (`initialize` and sessions, `task` on `tools/call`,
   * `CreateTaskResult`, `tasks/get`, `tasks/result`, `tasks/cancel`). `"both"`: each request
   * in the generation it speaks, on one endpoint with one ledger. Default `"2026-07-28"`. A
   * request of a generation the server does not serve gets that generation's answer for an
   * unsupported protocol version.
   */
  readonly generation?: "2026-07-28" | "2025-11-25" | "both" | undefined
  /**
   * 2025-11-25 only: each question of a task is put on one `tasks/result` stream, never again
   * (a server whose task message queue drops what it delivered, as SDK 1.x's does; a restart
   * does not bring it back). Default false: every `tasks/result` of a task that waits for input
   * carries all its open questions.
   */
  readonly questionsOnce?: boolean | undefined
  /**
   * Validate the SEP-2243 routing headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`).
   * Default true: a conforming client always sends them.
   */
  readonly validateHeaders?: boolean | undefined
  /** How expired tasks behave and when they are forgotten. */
  readonly expiry?: Expiry | undefined
  /** A global request budget (every MCP POST counts); 429 with `Retry-After` beyond it. */
  readonly rateLimit?: RateLimit | undefined
  /** Faults injected on a deterministic schedule. */
  readonly faults?: readonly FaultRule[] | undefined
  /** Added to every timestamp the server reports (`createdAt`, `lastUpdatedAt`): a skewed server clock. */
  readonly timestampSkewMs?: number | undefined
  /**
   * When true, a `tools/call` carrying an idempotency key already seen (in
   * `_meta["io.github.mcp-handles/key"]`) returns the task it created instead of launching again.
   */
  readonly deduplicateByKey?: boolean | undefined
  /** Path prefix of the non-MCP control endpoints (`GET {prefix}ledger`, ...). Default `/_`. */
  readonly controlPrefix?: string | undefined
  /** Record every request in the ledger (default true; turn off for very long benchmarks). */
  readonly recordRequests?: boolean | undefined
  /**
   * DNS-rebinding protection: the host names a request's `Host` header and its `Origin` (when
   * present) may name; anything else is refused with HTTP 403. Default: the loopback names
   * (`localhost`, `127.0.0.1`, `[::1]`). Serving on another interface, list its names; `["*"]`
   * turns the check off.
   */
  readonly allowedHosts?: readonly string[] | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Tool extends ToolBehaviour {
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  /** JSON Schema of the arguments (default `{ type: "object" }`). */
  readonly inputSchema?: JsonObject | undefined
  readonly annotations?: ToolAnnotations | undefined
  /**
   * Advertised in `tools/list` as `execution.taskSupport`. `required` makes a call from a client
   * that did not declare the tasks extension fail with -32021 (2025-11-25: a call without `task`
   * fails with -32601, and so does a call with `task` of a `forbidden` tool). Default: `optional`
   * when the tool can answer with a task, `forbidden` otherwise.
   */
  readonly taskSupport?: "forbidden" | "optional" | "required" | undefined
  /**
   * Client capabilities the tool needs (e.g. `{ sampling: {} }`): a call whose `_meta` does not
   * declare them all fails with -32021 naming them.
   */
  readonly requiresClientCapabilities?: JsonObject | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolAnnotations {
  readonly title?: string | undefined
  readonly readOnlyHint?: boolean | undefined
  readonly destructiveHint?: boolean | undefined
  readonly idempotentHint?: boolean | undefined
  readonly openWorldHint?: boolean | undefined
}

/**
 * Everything about how a call runs; settable per tool or under `defaults`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolBehaviour {
  /**
   * Whether a call answers with a task, directly, or by a seeded coin toss, for a client that
   * declared the tasks extension (2026-07-28; under 2025-11-25 the request's `task` decides).
   * Default `task`.
   */
  readonly shape?: ResultShape | undefined
  /**
   * Working time of a task (not counting time blocked on input), and how long a direct answer
   * is held: a call answered without a task is answered once this time has passed, as a real
   * server holds the request while the work runs. Default 0.
   */
  readonly durationMs?: Duration | undefined
  /** `pollIntervalMs` the task advertises; a schedule changes it over the task's life. */
  readonly pollIntervalMs?: PollInterval | undefined
  /** `ttlMs` of a task; `null` for unlimited. Default 3_600_000. */
  readonly ttlMs?: number | null | undefined
  /** Input requests raised while the task runs (answered with `tasks/update`). */
  readonly inputSteps?: readonly InputStep[] | undefined
  /**
   * Multi round-trip rounds on `tools/call` itself, before anything launches: each round answers
   * `resultType: "input_required"` with these requests and a `requestState`.
   */
  readonly mrtrRounds?: readonly InputRequests[] | undefined
  /** What the task (or direct call) ends with. Default: a text result `"ok"`. */
  readonly outcome?: OutcomeChoice | undefined
  /** Whether `tasks/cancel` stops the task (default true). An uncancellable task runs to its end. */
  readonly cancellable?: boolean | undefined
  /** Delay between a `tasks/cancel` and the task turning `cancelled` (default 0). */
  readonly cancelDelayMs?: number | undefined
  /** `statusMessage` reported while working (templated). */
  readonly workingMessage?: string | undefined
  /** A per-tool request budget on `tools/call` of this tool. */
  readonly rateLimit?: RateLimit | undefined
  /**
   * Multi round-trip requests that need a capability the client did not declare: `reject` the
   * call with -32021 (the default), or `omit` those requests from the round (SEP-2322: a server
   * only asks for what the client can answer).
   */
  readonly undeclaredInputs?: "reject" | "omit" | undefined
  /**
   * Progress of a direct call whose `_meta.progressToken` is set: the answer becomes an SSE
   * stream of `notifications/progress` and then the result. Unset, a direct answer held for a
   * duration reports `defaults.progress` over it. Tasks never report progress (the Tasks
   * extension does not support it).
   */
  readonly progress?: Progress | undefined
}

/**
 * @since 0.2.0
 * @category models
 */
export interface Progress {
  /** Progress values reported, in order (e.g. `[0, 50, 100]`). */
  readonly steps: readonly number[]
  /** `total` of every notification (omitted when unset). */
  readonly total?: number | undefined
  /**
   * Time between two notifications (through the server's `sleep`). Default: the steps spread
   * evenly over the call's duration, the last one as the result leaves (0 without a duration).
   * The result never leaves before the duration has passed.
   */
  readonly intervalMs?: number | undefined
  /** `message` of each notification (templated; `{{progress}}` is the value). */
  readonly message?: string | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export type ResultShape = "task" | "direct" | { readonly taskProbability: number }

/**
 * A fixed duration, or one read from a numeric argument (`seconds` × 1000, say).
 *
 * @since 0.1.0
 * @category models
 */
export type Duration =
  | number
  | {
      readonly fromArgument: string
      readonly multiplier?: number | undefined
      readonly defaultMs?: number | undefined
    }

/**
 * A constant interval, or a schedule keyed by time since the task was created.
 *
 * @since 0.1.0
 * @category models
 */
export type PollInterval = number | readonly PollIntervalChange[]

/**
 * @since 0.1.0
 * @category models
 */
export interface PollIntervalChange {
  /** From this much time after creation on... */
  readonly afterMs: number
  /** ...the task advertises this interval (any number: clients must cope with odd ones). */
  readonly pollIntervalMs: number
}

/**
 * Keyed server-to-client requests (`elicitation/create`, `sampling/createMessage`, `roots/list`).
 *
 * @since 0.1.0
 * @category models
 */
export type InputRequests = { readonly [key: string]: InputRequest }

/**
 * @since 0.1.0
 * @category models
 */
export interface InputRequest {
  readonly method: string
  readonly params?: JsonObject | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface InputStep {
  /** Working time after which the task blocks on these requests. */
  readonly atMs: number
  /** Keys must be unique over the task's life (the spec forbids reusing them). */
  readonly requests: InputRequests
  readonly statusMessage?: string | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export type OutcomeChoice = Outcome | { readonly weighted: readonly WeightedOutcome[] }

/**
 * @since 0.1.0
 * @category models
 */
export interface WeightedOutcome {
  readonly weight: number
  readonly outcome: Outcome
}

/**
 * How the work ends. Strings inside are templates: `{{args.name}}` reads an argument,
 * `{{inputs.key.content.field}}` an answer, `{{taskId}}` the task id; `{{path|fallback}}` defaults.
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome =
  | {
      readonly kind: "result"
      /** Shorthand for one text content block. */
      readonly text?: string | undefined
      readonly content?: readonly Json[] | undefined
      readonly structuredContent?: JsonObject | undefined
      /** A tool-level error: still `completed`, with `isError: true`. */
      readonly isError?: boolean | undefined
    }
  | {
      /** A JSON-RPC error: the task ends `failed` (a direct call answers with this error). */
      readonly kind: "error"
      readonly code: number
      readonly message: string
      readonly data?: Json | undefined
    }

/**
 * @since 0.1.0
 * @category models
 */
export interface Expiry {
  /**
   * What `tasks/get` answers once `createdAt + ttlMs` has passed: `reject` (-32602 "expired",
   * the default) or `fail` (a `failed` task, as the spec allows).
   */
  readonly mode?: "reject" | "fail" | undefined
  /** Time after expiry at which the task is deleted (then it is simply unknown). Default 60_000. */
  readonly purgeAfterMs?: number | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface RateLimit {
  /** Requests allowed per window. */
  readonly max: number
  readonly windowMs: number
  /** `Retry-After` (seconds) on the 429. Default: the time to the next window, rounded up. */
  readonly retryAfterSeconds?: number | undefined
}

/**
 * A fault injected when its `when` matches; deterministic by count or by seed.
 *
 * @since 0.1.0
 * @category models
 */
export interface FaultRule {
  readonly when?: FaultMatch | undefined
  readonly fault: Fault
}

/**
 * @since 0.1.0
 * @category models
 */
export interface FaultMatch {
  /** JSON-RPC method(s) the rule applies to (default: any). */
  readonly method?: string | readonly string[] | undefined
  /** For `tools/call`: the tool name. */
  readonly tool?: string | undefined
  /** Fire on these matching requests only (1-based count of requests this rule matched). */
  readonly nth?: number | readonly number[] | undefined
  /** Fire with this probability, drawn from the seeded generator. */
  readonly probability?: number | undefined
  /** Fire at most this many times. */
  readonly times?: number | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export type Fault =
  /**
   * Drop the connection. `before`: nothing happens on the server. `after` (the default): the request
   * is fully processed (a `tools/call` creates its task) and then the response is lost.
   */
  | { readonly kind: "drop"; readonly phase?: FaultPhase | undefined }
  /** Answer with this HTTP status (500, 503, 429...), before or after processing. */
  | {
      readonly kind: "status"
      readonly status: number
      readonly retryAfter?: number | string | undefined
      readonly body?: string | undefined
      readonly phase?: FaultPhase | undefined
    }
  /**
   * Wait this long (through the injectable `sleep`). `before` (the default): the request waits
   * before the server processes it. `after`: the server processes it at once (a `tools/call`
   * creates its task) and holds the answer back: a late answer, which may arrive after the client
   * gave up.
   */
  | { readonly kind: "latency"; readonly ms: number; readonly phase?: FaultPhase | undefined }
  /** Answer with a body that is not valid JSON (after processing unless `before`). */
  | { readonly kind: "malformed-json"; readonly phase?: FaultPhase | undefined }
  /** Process the request, then answer with a result of the wrong shape. */
  | { readonly kind: "wrong-shape"; readonly shape: WrongShape }
  /** Restart the server (losing in-memory tasks unless durable) just before this request. */
  | { readonly kind: "restart" }
  /** Skew the timestamps of this response. */
  | { readonly kind: "skew"; readonly ms: number }

/**
 * @since 0.1.0
 * @category models
 */
export type FaultPhase = "before" | "after"

/**
 * @since 0.1.0
 * @category models
 */
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
