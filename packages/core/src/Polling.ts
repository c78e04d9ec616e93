/**
 * When to poll next and how long to back off, per task. Intervals are per task (one task's
 * short interval never drags another's down) and persisted with the row (a restart resumes with
 * the server's interval, not a default).
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"

/**
 * The polling policy of a client.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** Server intervals are clamped into [min, max]: 0, negative or absurd values never hot-loop or stall. */
  readonly minIntervalMs: number
  readonly maxIntervalMs: number
  /** Used while the server gives no `pollIntervalMs`: start, growth factor, cap. */
  readonly defaultInitialMs: number
  readonly defaultFactor: number
  readonly defaultMaxMs: number
  /** Backoff after transport errors, 5xx, 429/503 (jittered; `Retry-After` wins when longer). */
  readonly retryInitialMs: number
  readonly retryFactor: number
  readonly retryMaxMs: number
  /** Attempts to dispatch a call that provably never left before giving up on it. */
  readonly maxDispatchAttempts: number
  /** How long a task may wait on only answered input keys before it is reported stuck. */
  readonly stuckAfterMs: number
}

/**
 * @since 0.1.0
 * @category constants
 */
export const defaults: Options = {
  minIntervalMs: 250,
  maxIntervalMs: 60_000,
  defaultInitialMs: 1_000,
  defaultFactor: 1.6,
  defaultMaxMs: 30_000,
  retryInitialMs: 500,
  retryFactor: 2,
  retryMaxMs: 60_000,
  maxDispatchAttempts: 5,
  stuckAfterMs: 5 * 60_000,
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Polling extends Context.Tag("@mcp-handles/core/Polling")<Polling, Options>() {}

/**
 * The policy: `defaults`, with every field of `options` that is not `undefined` instead.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: { readonly [K in keyof Options]?: Options[K] | undefined } = {},
): Layer.Layer<Polling> => {
  const given = Object.entries(options).filter(([, value]) => value !== undefined)
  return Layer.succeed(Polling, { ...defaults, ...Object.fromEntries(given) })
}

// Past this many steps every schedule here sits at its cap.
const maxSteps = 64

const nthDelay = (schedule: Schedule.Schedule<unknown>, n: number): Effect.Effect<number> =>
  Schedule.run(
    Schedule.delays(schedule),
    0,
    Array.from({ length: Math.min(n, maxSteps) + 1 }, () => undefined),
  ).pipe(Effect.map((delays) => Duration.toMillis(Chunk.unsafeLast(delays))))

/**
 * A server's interval clamped into [min, max], whole milliseconds: a zero, negative or absurd
 * value never hot-loops or stalls. The one place the rule lives.
 *
 * @since 0.2.0
 * @category utils
 */
export const clamp = (
  options: Pick<Options, "minIntervalMs" | "maxIntervalMs">,
  serverIntervalMs: number,
): number => Math.min(options.maxIntervalMs, Math.max(options.minIntervalMs, Math.ceil(serverIntervalMs)))

/**
 * A row's last server interval (`snapshot.pollIntervalMs`), clamped; `fallbackMs` when the server
 * gave none (or one that is not a finite number).
 *
 * @since 0.2.0
 * @category utils
 */
export const clampOr = (
  options: Pick<Options, "minIntervalMs" | "maxIntervalMs">,
  serverIntervalMs: number | undefined,
  fallbackMs: number,
): number =>
  serverIntervalMs === undefined || !Number.isFinite(serverIntervalMs)
    ? fallbackMs
    : clamp(options, serverIntervalMs)

/**
 * The wait before the next `tasks/get`: the server's interval, clamped; or, when the server gave
 * none for `pollsWithoutInterval` answers in a row, the default growing schedule.
 *
 * @since 0.1.0
 * @category utils
 */
export const interval = (
  options: Options,
  serverIntervalMs: number | undefined,
  pollsWithoutInterval: number,
): Effect.Effect<number> => {
  if (serverIntervalMs !== undefined && Number.isFinite(serverIntervalMs)) {
    return Effect.succeed(clamp(options, serverIntervalMs))
  }
  const schedule = Schedule.exponential(
    Duration.millis(options.defaultInitialMs),
    options.defaultFactor,
  ).pipe(Schedule.union(Schedule.spaced(Duration.millis(options.defaultMaxMs))))
  return nthDelay(schedule, Math.max(0, pollsWithoutInterval - 1))
}

/**
 * The wait after the `attempt`-th consecutive failure (1-based): exponential with jitter, capped,
 * and never shorter than the server's `Retry-After`.
 *
 * @since 0.1.0
 * @category utils
 */
export const retryDelay = (
  options: Options,
  attempt: number,
  retryAfterMs: number | undefined,
): Effect.Effect<number> => {
  const schedule = Schedule.exponential(Duration.millis(options.retryInitialMs), options.retryFactor).pipe(
    Schedule.jittered,
    Schedule.union(Schedule.spaced(Duration.millis(options.retryMaxMs))),
  )
  return nthDelay(schedule, Math.max(0, attempt - 1)).pipe(
    Effect.map((delay) => Math.max(Math.round(delay), Math.min(retryAfterMs ?? 0, options.retryMaxMs * 10))),
  )
}
