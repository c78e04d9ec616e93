/**
 * Builds a `TaskClient` from its parts (see `engine/`): the context every part works with,
 * the operations, the background reconciler, and the hand-off on close.
 */
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import * as ClientError from "../ClientError.js"
import * as HandleStore from "../HandleStore.js"
import * as Polling from "../Polling.js"
import type * as ServerIdentity from "../ServerIdentity.js"
import type * as TaskClient from "../TaskClient.js"
import type * as TaskReference from "../TaskReference.js"
import * as Wire from "../Wire.js"
import * as Answer from "./engine/answer.js"
import * as Answers from "./engine/answers.js"
import * as Bindings from "./engine/bindings.js"
import * as Context from "./engine/context.js"
import * as Drivers from "./engine/drivers.js"
import * as Leases from "./engine/leases.js"
import * as Operations from "./engine/operations.js"
import * as Push from "./engine/push.js"
import * as Quiet from "./engine/quiet.js"
import * as Reconciler from "./engine/reconciler.js"
import * as Unwritten from "./engine/unwritten.js"
import type * as Events from "./events.js"
import * as Gc from "./gc.js"
import type * as Outcomes from "./outcomes.js"

export const make = (
  options: TaskClient.Options,
): Effect.Effect<
  {
    readonly client: Omit<
      TaskClient.TaskClient,
      Outcomes.Members | TaskReference.Members | Events.Members | "redaction"
    >
    /** Writes of rows in this process, for the members built outside the engine (events). */
    readonly signals: Context.RowSignals
    /** A row's open questions whose handler here answered with what does not fit (events). */
    readonly refusedAnswers: (id: string) => ReadonlyMap<string, ReadonlyArray<string>>
  },
  ServerIdentity.InvalidServerUrl | HandleStore.InstanceIdInUse | HandleStore.StoreError,
  HandleStore.HandleStore | Wire.Wire | Polling.Polling | Scope.Scope
> =>
  Effect.gen(function* () {
    const ctx = yield* Context.make(options, {
      store: yield* HandleStore.HandleStore,
      wire: yield* Wire.Wire,
      polling: yield* Polling.Polling,
      clientScope: yield* Effect.scope,
      push: yield* Push.make(options),
    })
    // A client drives rows as this instance: no other live client may do so under the same id,
    // or each would take the other's live leases for a dead predecessor's. The hold is always
    // new to this process (a second client here is refused), so the boot sweep's take-over of
    // the id's leases only ever takes them from a process that is gone.
    if (options.claimInstance !== false)
      yield* Effect.provideService(ctx.store.lockInstance(ctx.owner), Scope.Scope, ctx.clientScope)
    // Servers by name (issue 15 item 7): the store learns where each configured name is now, so
    // every process on it (the CLI, another instance) can reach the rows this app writes.
    yield* Bindings.bind(ctx, options.recordServers !== false)
    yield* Effect.forkIn(Drivers.runAlarms(ctx), ctx.clientScope)
    yield* Effect.forkIn(Leases.heartbeat(ctx), ctx.clientScope)
    yield* Effect.forkIn(
      Quiet.keep(ctx, (scope, key) => Drivers.wake(ctx, scope, key)),
      ctx.clientScope,
    )
    if (ctx.push.enabled)
      yield* Effect.forkIn(
        Push.run(ctx, (scope, key) => Drivers.wake(ctx, scope, key)),
        ctx.clientScope,
      )
    // One sweep at a time: two sweeps under one owner id would claim each other's rows.
    const sweepLock = yield* Effect.makeSemaphore(1)

    if (options.background !== false) {
      yield* Reconciler.runBackground(ctx, sweepLock).pipe(
        Effect.catchAllCause((cause) => Effect.logError("background reconciler stopped", cause)),
        Effect.forkIn(ctx.clientScope),
      )
    }
    // Finalizers cannot be interrupted: a store that stopped answering must not hold the close up.
    // It runs once the drivers (forked later) have stopped: a task id whose write they were still
    // retrying is written or cancelled first, then every row is handed off.
    yield* Effect.addFinalizer(() =>
      Effect.zipRight(
        Unwritten.settle(ctx),
        Effect.forEach(ctx.held, (id) => Reconciler.handOff(ctx, id), { discard: true, concurrency: 16 }),
      ),
    )

    const client = {
      callTool: Operations.callTool(ctx),
      settle: (key, scope = ctx.defaultScope, settleOptions) =>
        Operations.settle(ctx, key, scope, settleOptions),
      answer: Answer.answer(ctx),
      cancel: Operations.cancel(ctx),
      reissue: Operations.reissue(ctx),
      abandon: Operations.abandon(ctx),
      reconcile: sweepLock.withPermits(1)(Reconciler.sweep(ctx, true)),
      list: (listOptions = {}) => {
        const serverId =
          listOptions.server === undefined
            ? undefined
            : (ctx.serversByName.get(listOptions.server)?.id ?? listOptions.server)
        return ctx.store.list({
          scope: listOptions.scope ?? ctx.defaultScope,
          limit: listOptions.limit ?? 100,
          statuses: listOptions.statuses,
          serverId,
          cursor: listOptions.cursor,
        })
      },
      get: (key, scope = ctx.defaultScope) => Operations.load(ctx, scope, key),
      gc: (retention, options) => Gc.run(ctx.store, retention, options),
      listTools: (name) => {
        const server = ctx.serversByName.get(name)
        return server === undefined
          ? Effect.fail(new ClientError.UnknownServer({ server: name }))
          : ctx.wire.listTools(server.endpoint)
      },
    } satisfies Omit<
      TaskClient.TaskClient,
      Outcomes.Members | TaskReference.Members | Events.Members | "redaction"
    >
    return { client, signals: ctx.signals, refusedAnswers: (id: string) => Answers.refusedAnswers(ctx, id) }
  })
