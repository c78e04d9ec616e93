/**
 * A fake server's tools and how each call of one runs: its shape (task or direct answer), working
 * time, poll intervals, input requests, progress and outcome. Part of a `Config`, which
 * re-exports every name here.
 *
 * @since 0.4.0
 */
import * as Schema from "effect/Schema"
import { Json, JsonObject } from "./Json.js"

const optional = Schema.optional

/**
 * @since 0.1.0
 * @category models
 */
export const ToolAnnotations = Schema.Struct({
  title: optional(Schema.String),
  readOnlyHint: optional(Schema.Boolean),
  destructiveHint: optional(Schema.Boolean),
  idempotentHint: optional(Schema.Boolean),
  openWorldHint: optional(Schema.Boolean),
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolAnnotations extends Schema.Schema.Type<typeof ToolAnnotations> {}

/**
 * @since 0.1.0
 * @category models
 */
export const ResultShape = Schema.Union(
  Schema.Literal("task", "direct"),
  Schema.Struct({ taskProbability: Schema.Number }),
)

/**
 * @since 0.1.0
 * @category models
 */
export type ResultShape = typeof ResultShape.Type

/**
 * A fixed duration, or one read from a numeric argument (`seconds` × 1000, say).
 *
 * @since 0.1.0
 * @category models
 */
export const Duration = Schema.Union(
  Schema.Number,
  Schema.Struct({
    fromArgument: Schema.String,
    multiplier: optional(Schema.Number),
    defaultMs: optional(Schema.Number),
  }),
)

/**
 * @since 0.1.0
 * @category models
 */
export type Duration = typeof Duration.Type

/**
 * @since 0.1.0
 * @category models
 */
export const PollIntervalChange = Schema.Struct({
  /** From this much time after creation on... */
  afterMs: Schema.Number,
  /** ...the task advertises this interval (any number: clients must cope with odd ones). */
  pollIntervalMs: Schema.Number,
})

/**
 * @since 0.1.0
 * @category models
 */
export interface PollIntervalChange extends Schema.Schema.Type<typeof PollIntervalChange> {}

/**
 * A constant interval, or a schedule keyed by time since the task was created.
 *
 * @since 0.1.0
 * @category models
 */
export const PollInterval = Schema.Union(Schema.Number, Schema.Array(PollIntervalChange))

/**
 * @since 0.1.0
 * @category models
 */
export type PollInterval = typeof PollInterval.Type

/**
 * @since 0.1.0
 * @category models
 */
export const InputRequest = Schema.Struct({
  method: Schema.String,
  params: optional(JsonObject),
})

/**
 * @since 0.1.0
 * @category models
 */
export interface InputRequest extends Schema.Schema.Type<typeof InputRequest> {}

/**
 * Keyed server-to-client requests (`elicitation/create`, `sampling/createMessage`, `roots/list`).
 *
 * @since 0.1.0
 * @category models
 */
export const InputRequests = Schema.Record({ key: Schema.String, value: InputRequest })

/**
 * @since 0.1.0
 * @category models
 */
export type InputRequests = typeof InputRequests.Type

/**
 * @since 0.1.0
 * @category models
 */
export const InputStep = Schema.Struct({
  /** Working time after which the task blocks on these requests. */
  atMs: Schema.Number,
  /** Keys must be unique over the task's life (the spec forbids reusing them). */
  requests: InputRequests,
  statusMessage: optional(Schema.String),
})

/**
 * @since 0.1.0
 * @category models
 */
export interface InputStep extends Schema.Schema.Type<typeof InputStep> {}

/**
 * How the work ends. Strings inside are templates: `{{args.name}}` reads an argument,
 * `{{inputs.key.content.field}}` an answer, `{{taskId}}` the task id; `{{path|fallback}}` defaults.
 *
 * @since 0.1.0
 * @category models
 */
export const Outcome = Schema.Union(
  Schema.Struct({
    kind: Schema.Literal("result"),
    /** Shorthand for one text content block. */
    text: optional(Schema.String),
    content: optional(Schema.Array(Json)),
    structuredContent: optional(JsonObject),
    /** A tool-level error: still `completed`, with `isError: true`. */
    isError: optional(Schema.Boolean),
  }),
  /** A JSON-RPC error: the task ends `failed` (a direct call answers with this error). */
  Schema.Struct({
    kind: Schema.Literal("error"),
    code: Schema.Number,
    message: Schema.String,
    data: optional(Json),
  }),
)

/**
 * @since 0.1.0
 * @category models
 */
export type Outcome = typeof Outcome.Type

/**
 * @since 0.1.0
 * @category models
 */
export const WeightedOutcome = Schema.Struct({ weight: Schema.Number, outcome: Outcome })

/**
 * @since 0.1.0
 * @category models
 */
export interface WeightedOutcome extends Schema.Schema.Type<typeof WeightedOutcome> {}

/**
 * @since 0.1.0
 * @category models
 */
export const OutcomeChoice = Schema.Union(Outcome, Schema.Struct({ weighted: Schema.Array(WeightedOutcome) }))

/**
 * @since 0.1.0
 * @category models
 */
export type OutcomeChoice = typeof OutcomeChoice.Type

/**
 * @since 0.1.0
 * @category models
 */
export const RateLimit = Schema.Struct({
  /** Requests allowed per window. */
  max: Schema.Number,
  windowMs: Schema.Number,
  /** `Retry-After` (seconds) on the 429. Default: the time to the next window, rounded up. */
  retryAfterSeconds: optional(Schema.Number),
})

/**
 * @since 0.1.0
 * @category models
 */
export interface RateLimit extends Schema.Schema.Type<typeof RateLimit> {}

/**
 * @since 0.2.0
 * @category models
 */
export const Progress = Schema.Struct({
  /** Progress values reported, in order (e.g. `[0, 50, 100]`). */
  steps: Schema.Array(Schema.Number),
  /** `total` of every notification (omitted when unset). */
  total: optional(Schema.Number),
  /**
   * Time between two notifications (through the server's `sleep`). Default: the steps spread
   * evenly over the call's duration, the last one as the result leaves (0 without a duration).
   * The result never leaves before the duration has passed.
   */
  intervalMs: optional(Schema.Number),
  /** `message` of each notification (templated; `{{progress}}` is the value). */
  message: optional(Schema.String),
})

/**
 * @since 0.2.0
 * @category models
 */
export interface Progress extends Schema.Schema.Type<typeof Progress> {}

/**
 * Everything about how a call runs; settable per tool or under `defaults`.
 *
 * @since 0.1.0
 * @category models
 */
export const ToolBehaviour = Schema.Struct({
  /**
   * Whether a call answers with a task, directly, or by a seeded coin toss, for a client that
   * declared the tasks extension (2026-07-28; under 2025-11-25 the request's `task` decides).
   * Default `task`.
   */
  shape: optional(ResultShape),
  /**
   * Working time of a task (not counting time blocked on input), and how long a direct answer
   * is held: a call answered without a task is answered once this time has passed, as a real
   * server holds the request while the work runs. Default 0.
   */
  durationMs: optional(Duration),
  /** `pollIntervalMs` the task advertises; a schedule changes it over the task's life. */
  pollIntervalMs: optional(PollInterval),
  /** `ttlMs` of a task; `null` for unlimited. Default 3_600_000. */
  ttlMs: optional(Schema.NullOr(Schema.Number)),
  /** Input requests raised while the task runs (answered with `tasks/update`). */
  inputSteps: optional(Schema.Array(InputStep)),
  /**
   * Multi round-trip rounds on `tools/call` itself, before anything launches: each round answers
   * `resultType: "input_required"` with these requests and a `requestState`.
   */
  mrtrRounds: optional(Schema.Array(InputRequests)),
  /** What the task (or direct call) ends with. Default: a text result `"ok"`. */
  outcome: optional(OutcomeChoice),
  /** Whether `tasks/cancel` stops the task (default true). An uncancellable task runs to its end. */
  cancellable: optional(Schema.Boolean),
  /** Delay between a `tasks/cancel` and the task turning `cancelled` (default 0). */
  cancelDelayMs: optional(Schema.Number),
  /** `statusMessage` reported while working (templated). */
  workingMessage: optional(Schema.String),
  /** A per-tool request budget on `tools/call` of this tool. */
  rateLimit: optional(RateLimit),
  /**
   * Multi round-trip requests that need a capability the client did not declare: `reject` the
   * call with -32021 (the default), or `omit` those requests from the round (SEP-2322: a server
   * only asks for what the client can answer).
   */
  undeclaredInputs: optional(Schema.Literal("reject", "omit")),
  /**
   * Progress of a direct call whose `_meta.progressToken` is set: the answer becomes an SSE
   * stream of `notifications/progress` and then the result. Unset, a direct answer held for a
   * duration reports `defaults.progress` over it. Tasks never report progress (the Tasks
   * extension does not support it).
   */
  progress: optional(Progress),
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolBehaviour extends Schema.Schema.Type<typeof ToolBehaviour> {}

/**
 * @since 0.1.0
 * @category models
 */
export const Tool = Schema.Struct({
  ...ToolBehaviour.fields,
  name: Schema.String,
  title: optional(Schema.String),
  description: optional(Schema.String),
  /** JSON Schema of the arguments (default `{ type: "object" }`). */
  inputSchema: optional(JsonObject),
  annotations: optional(ToolAnnotations),
  /**
   * Advertised in `tools/list` as `execution.taskSupport`. `required` makes a call from a client
   * that did not declare the tasks extension fail with -32021 (2025-11-25: a call without `task`
   * fails with -32601, and so does a call with `task` of a `forbidden` tool). Default: `optional`
   * when the tool can answer with a task, `forbidden` otherwise.
   */
  taskSupport: optional(Schema.Literal("forbidden", "optional", "required")),
  /**
   * Client capabilities the tool needs (e.g. `{ sampling: {} }`): a call whose `_meta` does not
   * declare them all fails with -32021 naming them.
   */
  requiresClientCapabilities: optional(JsonObject),
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Tool extends Schema.Schema.Type<typeof Tool> {}
