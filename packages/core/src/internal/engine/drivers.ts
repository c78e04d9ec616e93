/**
 * The rows this process drives, one driver per row at most. A driver dispatches a pending row
 * (waiting out a late answer while it holds the lease), then drives the task until it rests,
 * parked between actions. However it ends (rested, lease lost, store failure, interrupted) it
 * leaves the registry and says so: nothing waits on a driver that is gone.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as HandleRecord from "../../HandleRecord.js"
import type * as Json from "../../Json.js"
import type * as TaskClient from "../../TaskClient.js"
import * as Transition from "../../Transition.js"
import { type Driver, type Engine, endpointOf, makeLatch, openLatch, rowId } from "./context.js"
import { awaitLate, dispatch } from "./dispatch.js"
import { type Drove, drive } from "./drive.js"
import { type CommitError, commit } from "./leases.js"
import * as Push from "./push.js"
import * as Quiet from "./quiet.js"

/**
 * Wakes the row's driver in this process, if it has one (a cancel was just recorded): a parked
 * one is resumed at once, a running one looks at the row again before it would park.
 */
export const wake = (ctx: Engine, scope: string, key: string): Effect.Effect<boolean> =>
  Effect.suspend(() => {
    const id = rowId(scope, key)
    const driver = ctx.drivers.get(id)
    if (driver === undefined) return Effect.succeed(false)
    if (!driver.parked) {
      driver.woken = true
      return Effect.succeed(true)
    }
    ctx.alarms.clear(id)
    return Effect.as(resume(ctx, id), true)
  })

/** The driver leaves the registry, and whoever waits on it learns so. */
const end = (ctx: Engine, id: string, driver: Driver) =>
  Effect.sync(() => {
    if (ctx.drivers.get(id) === driver) ctx.drivers.delete(id)
    Push.unwatch(ctx, id)
    // Nobody polls the row here any more: its lease says when another may, as after a crash.
    Quiet.forget(ctx, driver.scope, driver.key)
    // Its handler's troubles were this driver's: a driver that takes the row up again asks anew.
    ctx.handlerTrouble.delete(id)
    openLatch(driver.dispatched)
    openLatch(driver.ended)
    ctx.signals.notify(id)
  })

/**
 * Runs a stretch of the driver in a fiber of the client. Unless it parked, the driver ends with
 * it, however it ended (rested, lease lost, store failure, interrupted).
 */
const run = (
  ctx: Engine,
  id: string,
  driver: Driver,
  work: Effect.Effect<Drove, CommitError>,
): Effect.Effect<void> =>
  work.pipe(
    Effect.tap((drove) =>
      // A settled row holds no lease; an in-doubt one is still handed off on close.
      typeof drove !== "string" && HandleRecord.isTerminal(drove.status)
        ? Effect.sync(() => ctx.held.delete(id))
        : Effect.void,
    ),
    Effect.catchTag("LeaseLost", () =>
      Effect.as(Effect.logDebug("lease lost; another instance drives the row"), "ended" as const),
    ),
    Effect.catchAllCause((cause) =>
      Effect.as(
        Effect.logWarning("a row's driver stopped; the row stays open", { key: driver.key, cause }),
        "ended" as const,
      ),
    ),
    Effect.onExit((exit) =>
      Exit.isSuccess(exit) && exit.value === "parked" ? Effect.void : end(ctx, id, driver),
    ),
    // A resumed driver runs outside the call that started it: its log lines say whose row.
    Effect.annotateLogs({ key: driver.key, scope: driver.scope }),
    Effect.forkIn(ctx.clientScope),
    Effect.asVoid,
  )

/** Resumes a parked driver (its alarm rang, or it was woken). */
export const resume = (ctx: Engine, id: string): Effect.Effect<void> =>
  Effect.suspend(() => {
    const driver = ctx.drivers.get(id)
    if (driver === undefined || !driver.parked) return Effect.void
    driver.parked = false
    return run(ctx, id, driver, drive(ctx, driver))
  })

/**
 * Rings the client's alarms until the client closes; then every parked driver ends (nothing
 * resumes them any more), so no one waits on them.
 */
export const runAlarms = (ctx: Engine): Effect.Effect<never> =>
  ctx.alarms
    .run((id) => resume(ctx, id))
    .pipe(
      Effect.ensuring(
        Effect.forEach(
          [...ctx.drivers].filter(([, driver]) => driver.parked),
          ([id, driver]) => end(ctx, id, driver),
          { discard: true },
        ),
      ),
    )

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
    // As on the first call, before the re-send is written: a tool the server now defines in a way
    // that must not be called is not sent again; the call stays in doubt for the app to decide.
    if (ctx.wire.checkTool !== undefined) {
      const checked = yield* Effect.either(ctx.wire.checkTool(endpoint, record.tool))
      if (Either.isLeft(checked)) {
        yield* Effect.logWarning("an in-doubt call is not re-sent: its tool's definition is invalid", {
          key: record.key,
          reason: checked.left.reason,
        })
        return Option.none<HandleRecord.HandleRecord>()
      }
    }
    yield* Effect.logInfo("re-sending an in-doubt call of an idempotent tool", { key: record.key })
    const now = yield* ctx.store.now
    return Option.some(yield* commit(ctx, record, Transition.Event.Reissued({ now }), "action"))
  })

/** Opens `dispatched`, handing the row to the `callTool` that waits on it (if one does). */
const dispatchedAs = (driver: Driver, record: HandleRecord.HandleRecord) => {
  if (driver.dispatched.waiting !== undefined) driver.dispatchedRecord = record
  openLatch(driver.dispatched)
}

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
      id,
      scope: record.scope,
      key: record.key,
      handler,
      polled: false,
      parked: false,
      woken: false,
      dispatched: makeLatch(),
      dispatchedRecord: undefined,
      ended: makeLatch(),
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
          dispatchedAs(driver, current)
          current = yield* awaitLate(ctx, current, sent.late.value)
        }
        current = Option.getOrElse(yield* reissueByPolicy(ctx, current), () => current)
      }
      dispatchedAs(driver, current)
      return yield* drive(ctx, driver, current)
    })
    return Effect.as(run(ctx, id, driver, work), driver)
  })
