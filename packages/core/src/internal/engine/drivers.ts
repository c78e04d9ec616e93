/**
 * The fibers of this process that drive rows, one per row at most. A driver dispatches a
 * pending row (waiting out a late answer while it holds the lease), then drives the task until
 * it rests. However it ends (rested, lease lost, store failure, interrupted) it leaves the
 * registry and says so: nothing waits on a driver that is gone.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import * as HandleRecord from "../../HandleRecord.js"
import type * as Json from "../../Json.js"
import type * as TaskClient from "../../TaskClient.js"
import * as Transition from "../../Transition.js"
import { type Driver, type Engine, endpointOf, rowId } from "./context.js"
import { awaitLate, dispatch } from "./dispatch.js"
import { drive } from "./drive.js"
import { commit } from "./leases.js"

/** Wakes the row's driver in this process, if it has one (a cancel was just recorded). */
export const wake = (ctx: Engine, scope: string, key: string): boolean => {
  const driver = ctx.drivers.get(rowId(scope, key))
  if (driver === undefined) return false
  Deferred.unsafeDone(driver.wake, Exit.void)
  return true
}

const isIdempotent = (ctx: Engine, endpoint: { readonly name: string }, tool: string) =>
  Effect.gen(function* () {
    const cached = ctx.idempotentTools.get(endpoint.name)
    if (cached !== undefined) return cached.has(tool)
    const endpointConfig = ctx.serversByName.get(endpoint.name)?.endpoint
    if (endpointConfig === undefined) return false
    const tools = yield* Effect.either(ctx.wire.listTools(endpointConfig))
    if (Either.isLeft(tools)) return false
    const idempotent = new Set(tools.right.filter((t) => t.idempotentHint).map((t) => t.name))
    ctx.idempotentTools.set(endpoint.name, idempotent)
    return idempotent.has(tool)
  })

/**
 * Moves an in-doubt call back to pending when policy and the tool allow a re-send; the caller
 * dispatches it. None when the call stays in doubt. Only called once no answer to the first
 * dispatch can arrive any more.
 */
export const reissueByPolicy = (ctx: Engine, record: HandleRecord.HandleRecord) =>
  Effect.gen(function* () {
    if (ctx.options.inDoubtPolicy !== "reissue-if-idempotent" || record.status !== "in_doubt") {
      return Option.none<HandleRecord.HandleRecord>()
    }
    const endpoint = endpointOf(ctx, record)
    if (endpoint === undefined || record.arguments === null) return Option.none<HandleRecord.HandleRecord>()
    if (!(yield* isIdempotent(ctx, endpoint, record.tool))) return Option.none<HandleRecord.HandleRecord>()
    yield* Effect.logInfo("re-sending an in-doubt call of an idempotent tool", { key: record.key })
    const now = yield* ctx.store.now
    return Option.some(yield* commit(ctx, record, Transition.Event.Reissued({ now }), "action"))
  })

/**
 * Makes sure a fiber of this process drives the row (dispatching first when it is pending and
 * `args` are given) and returns it. The row must be leased to this instance already.
 */
export const ensureDriving = (
  ctx: Engine,
  record: HandleRecord.HandleRecord,
  args?: Json.JsonObject,
  handler: TaskClient.InputHandler | undefined = ctx.options.onInputRequired,
): Effect.Effect<Driver> =>
  Effect.suspend(() => {
    const id = rowId(record.scope, record.key)
    const existing = ctx.drivers.get(id)
    if (existing !== undefined) return Effect.succeed(existing)
    // Registered before any yield, so no other fiber can start a second driver meanwhile.
    const driver: Driver = {
      fiber: undefined,
      dispatched: Deferred.unsafeMake(FiberId.none),
      ended: Deferred.unsafeMake(FiberId.none),
      wake: Deferred.unsafeMake(FiberId.none),
    }
    ctx.drivers.set(id, driver)
    ctx.held.add(id)
    const endpoint = endpointOf(ctx, record)
    const work = Effect.gen(function* () {
      let current = record
      while (current.status === "pending" && endpoint !== undefined && args !== undefined) {
        const sent = yield* dispatch(ctx, current, endpoint, args, handler)
        current = sent.record
        if (Option.isSome(sent.late)) {
          // The caller learns the call is in doubt now; its answer may still come.
          yield* Deferred.succeed(driver.dispatched, undefined)
          current = yield* awaitLate(ctx, current, sent.late.value)
        }
        current = Option.getOrElse(yield* reissueByPolicy(ctx, current), () => current)
      }
      yield* Deferred.succeed(driver.dispatched, undefined)
      const rested = yield* drive(ctx, current, handler, driver)
      // A settled row holds no lease; an in-doubt one is still handed off on close.
      if (HandleRecord.isTerminal(rested.status)) ctx.held.delete(id)
    })
    return work.pipe(
      Effect.catchTag("LeaseLost", () => Effect.logDebug("lease lost; another instance drives the row")),
      Effect.catchAllCause((cause) =>
        Effect.logWarning("a row's driver stopped; the row stays open", { key: record.key, cause }),
      ),
      Effect.ensuring(
        Effect.sync(() => {
          if (ctx.drivers.get(id) === driver) ctx.drivers.delete(id)
          Deferred.unsafeDone(driver.dispatched, Exit.void)
          Deferred.unsafeDone(driver.ended, Exit.void)
          ctx.signals.notify(id)
        }),
      ),
      Effect.forkIn(ctx.clientScope),
      Effect.map((fiber) => {
        driver.fiber = fiber
        return driver
      }),
    )
  })
