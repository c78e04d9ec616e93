/**
 * How a client's fibers log and trace through redacting wrappers of whatever logger and tracer
 * the app installed (the ids to hide are learned by `Redaction.watchStore`).
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashSet from "effect/HashSet"
import type * as Logger from "effect/Logger"
import type * as Tracer from "effect/Tracer"
import * as Redaction from "../Redaction.js"
import { nativeTracer } from "./telemetry.js"

const wrappedLoggers = new WeakSet<Logger.Logger<unknown, unknown>>()
const wrappedTracers = new WeakSet<Tracer.Tracer>()

/**
 * `effect` (and the fibers it forks) logging and tracing through `Redaction`'s wrappers around
 * the loggers and tracer in place.
 */
export const redacting = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  known: Redaction.Known,
): Effect.Effect<A, E, R> =>
  Effect.tracerWith((tracer) => {
    // The native tracer exports nothing, so there is nothing to redact; and a wrapper would no
    // longer be the native tracer, so every poll would make the spans it is spared (B8).
    const traced =
      tracer === nativeTracer || wrappedTracers.has(tracer)
        ? effect
        : Effect.withTracer(
            effect,
            (() => {
              const wrapped = Redaction.tracer(tracer, known)
              wrappedTracers.add(wrapped)
              return wrapped
            })(),
          )
    return Effect.locallyWith(traced, FiberRef.currentLoggers, (loggers) =>
      HashSet.map(loggers, (logger) => {
        if (wrappedLoggers.has(logger)) return logger
        const wrapped = Redaction.logger(logger, known)
        wrappedLoggers.add(wrapped)
        return wrapped
      }),
    )
  })
