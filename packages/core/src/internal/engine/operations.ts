/**
 * The `TaskClient` operations. Waiting (`settle`) reads the outcome from the store, whoever
 * drove the row; intents (`cancel`, `abandon`) are compare-and-set writes of their own fields
 * that leave the lease alone; only a driver acts on the server.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ClientError from "../../ClientError.js"
import * as HandleRecord from "../../HandleRecord.js"
import type * as HandleStore from "../../HandleStore.js"
import * as Json from "../../Json.js"
import * as Outcome from "../../Outcome.js"
import * as ServerIdentity from "../../ServerIdentity.js"
import * as ServerRequest from "../../ServerRequest.js"
import type * as TaskClient from "../../TaskClient.js"
import * as Transition from "../../Transition.js"
import { refusedAnswers } from "./answers.js"
import { awaitLatch, type Engine, endpointOf, rowId } from "./context.js"
import { cancelStrays } from "./drive.js"
import { ensureDriving, wake } from "./drivers.js"
import { commit, leasedByOther, takeLease } from "./leases.js"
import * as Notices from "./notices.js"
import * as Quiet from "./quiet.js"

/** The row, as its driver here knows it if it has one (see quiet.ts). */
export const load = (ctx: Engine, scope: string, key: string) =>
  Effect.flatMap(Quiet.read(ctx, scope, key), (found) =>
    Option.match(found, {
      onNone: () => Effect.fail(new ClientError.UnknownKey({ scope, key })),
      onSome: Effect.succeed,
    }),
  )

/** How long a waiter sleeps before it looks at a row driven elsewhere again. */
const recheckMs = (ctx: Engine, record: HandleRecord.HandleRecord, now: number) => {
  const next = Math.min(record.leaseExpiresAt ?? now, record.nextPollAt ?? now) - now
  return Math.max(ctx.polling.minIntervalMs, Math.min(1_000, next))
}

/**
 * The requests of a call waiting for input that nobody has answered yet, each with why the
 * handler here answered it with what does not fit, if it did.
 */
const unanswered = (
  record: HandleRecord.HandleRecord,
  refused: ReadonlyMap<string, ReadonlyArray<string>>,
): ReadonlyArray<ClientError.OpenRequest> =>
  record.status !== "input_required"
    ? []
    : Object.entries(record.inputRequests ?? {})
        .filter(([inputKey]) => record.answers[inputKey] === undefined)
        .map(([inputKey, request]) => {
          const problems = refused.get(inputKey)
          return {
            inputKey,
            request: ServerRequest.decode(request),
            ...(problems === undefined ? {} : { problems }),
          }
        })

export const settle = (
  ctx: Engine,
  key: string,
  scope: string,
  options: TaskClient.SettleOptions = {},
): Effect.Effect<
  Outcome.Outcome,
  ClientError.UnknownKey | ClientError.UnknownServer | ClientError.InputRequired | HandleStore.StoreError
> =>
  Effect.gen(function* () {
    const id = rowId(scope, key)
    // Without a handler here, a call that asks for input would make this wait last until the
    // task's TTL: it stops instead (InputRequired), unless the caller chose to wait. So does a
    // wait whose handler answered with what does not fit the request (it would be asked again
    // at every poll, to the same end).
    const waitsForInput = options.waitForInput === true
    const noHandler = () => (ctx.drivers.get(id)?.handler ?? ctx.options.onInputRequired) === undefined
    for (;;) {
      // The outcome is read from the store once this process's driver ends, whatever ended it:
      // reading before that would only find the row still open. A wait that stops on input also
      // looks at each write of the row (a refused answer counts as one).
      const driving = ctx.drivers.get(id)
      if (driving !== undefined) {
        yield* waitsForInput
          ? awaitLatch(driving.ended)
          : Effect.raceFirst(
              awaitLatch(driving.ended),
              ctx.signals.wait(id, noHandler() ? 1_000 : ctx.leaseMs),
            )
      }
      const record = yield* load(ctx, scope, key)
      const rested = Outcome.fromRecord(record)
      if (rested !== undefined) {
        // A stray task a crash left uncancelled is cancelled by whoever looks at the row.
        if (Transition.uncancelledStrays(record).length > 0) yield* Effect.ignore(cancelStrays(ctx, record))
        return rested
      }
      if (!waitsForInput) {
        const open = unanswered(record, refusedAnswers(ctx, id))
        const stopping = noHandler() ? open : open.filter((request) => request.problems !== undefined)
        if (stopping.length > 0)
          return yield* Effect.fail(new ClientError.InputRequired({ scope, key, requests: stopping }))
      }
      // A driver started since (by a wake, or the sweep): wait for it as above.
      if (ctx.drivers.has(id)) continue
      const now = yield* ctx.store.now
      if (!leasedByOther(ctx, record, now) && !ctx.stepping.has(id)) {
        if (record.status === "pending") {
          // Its dispatcher is gone (this process never had it, or it died): in doubt.
          yield* commit(ctx, record, Transition.Event.Recovered({ now }), "action").pipe(
            Effect.catchTag("LeaseLost", () => Effect.void),
          )
          continue
        }
        // Nobody drives it and this client cannot reach its server: waiting would be forever.
        if (endpointOf(ctx, record) === undefined) {
          return yield* Effect.fail(new ClientError.UnknownServer({ server: record.serverId }))
        }
        const leased = yield* takeLease(ctx, record)
        if (Option.isSome(leased)) {
          yield* ensureDriving(ctx, leased.value)
          continue
        }
      }
      // Another live instance (or this one's sweep) drives it: wait for a local write, or look again.
      yield* ctx.signals.wait(id, recheckMs(ctx, record, now))
    }
  })

export const handleOf = (
  ctx: Engine,
  record: HandleRecord.HandleRecord,
  launched: boolean,
): TaskClient.Handle => ({
  key: record.key,
  scope: record.scope,
  launched,
  record,
  outcome: settle(ctx, record.key, record.scope),
})

// Keys and scopes are indexed text in every store and appear in logs and terminals.
const checkName = (what: "key" | "scope", name: string) =>
  name.length === 0 || name.length > 512
    ? Effect.fail(new ClientError.InvalidKey({ what, reason: "must be 1 to 512 characters" }))
    : // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
      /[\u0000-\u001f\u007f]/.test(name)
      ? Effect.fail(new ClientError.InvalidKey({ what, reason: "must not contain control characters" }))
      : Effect.succeed(name)

/**
 * Why a key's row is not the call asked for, in the caller's terms: what differs, and how the
 * earlier call stands. A call the server refused (an unknown tool) keeps its key, like any call
 * that came to rest: a retry of the same call gets the same failure, so the one with the typo
 * fixed needs a key of its own.
 */
const keyReuse = (
  record: HandleRecord.HandleRecord,
  serverName: string,
  tool: string,
  argumentsHash: string,
): string | undefined => {
  const server = ServerIdentity.nameOf(record.serverId)
  const differs =
    server !== serverName
      ? `on server ${server}, not ${serverName}`
      : record.tool !== tool
        ? `of tool ${record.tool}, not ${tool}`
        : record.argumentsHash !== argumentsHash
          ? `of ${tool} with other arguments`
          : undefined
  if (differs === undefined) return undefined
  const state =
    record.error === null ? record.status : `${record.status}: ${record.error.code} ${record.error.message}`
  return `it names an earlier call ${differs} (${state}); a key names one call, so pass another key for this one`
}

export const callTool =
  (ctx: Engine): TaskClient.TaskClient["callTool"] =>
  (serverName, tool, rawArgs, callOptions = {}) =>
    Effect.gen(function* () {
      const server = ctx.serversByName.get(serverName)
      if (server === undefined)
        return yield* Effect.fail(new ClientError.UnknownServer({ server: serverName }))
      const validated = yield* Json.validate("arguments", rawArgs, ctx.argumentLimits)
      if (validated === null || typeof validated !== "object" || Array.isArray(validated)) {
        return yield* Effect.fail(
          new Json.InvalidJson({ what: "arguments", reason: "must be a JSON object" }),
        )
      }
      const args = validated as Json.JsonObject
      // A tool the server defines in a way that must not be called is refused before any write.
      if (ctx.wire.checkTool !== undefined) yield* ctx.wire.checkTool(server.endpoint, tool)
      const argumentsHash = yield* Json.hash({ tool, arguments: args })
      const scope = yield* checkName("scope", callOptions.scope ?? ctx.defaultScope)
      const key = yield* checkName("key", callOptions.key ?? crypto.randomUUID())
      const now = yield* ctx.store.now
      const { record, created } = yield* ctx.store.insertOrGet({
        scope,
        key,
        serverId: server.id,
        tool,
        arguments: ctx.options.storeArguments === "hash" ? null : args,
        argumentsHash,
        owner: ctx.driverOwner,
        leaseMs: ctx.leaseMs,
        now,
      })
      // Whoever waits for this key's first write (an events subscriber) learns it now.
      if (created) ctx.signals.notify(rowId(scope, key))
      if (!created) {
        // The same server by name: the app may have moved it to another URL since.
        const reason = keyReuse(record, serverName, tool, argumentsHash)
        if (reason !== undefined) return yield* Effect.fail(new ClientError.KeyReused({ key, reason }))
        if (record.status === "in_doubt") yield* Notices.inDoubt(record)
        return handleOf(ctx, record, false)
      }
      const driver = yield* ensureDriving(
        ctx,
        record,
        args,
        callOptions.onInputRequired ?? ctx.options.onInputRequired,
      )
      // Return once the dispatch has been answered: the task id is durable by then.
      yield* awaitLatch(driver.dispatched)
      const dispatched = driver.dispatchedRecord
      driver.dispatchedRecord = undefined
      const current = dispatched === undefined ? yield* ctx.store.get(scope, key) : Option.some(dispatched)
      return handleOf(
        ctx,
        Option.getOrElse(current, () => record),
        true,
      )
    })

const abandonRecord = (ctx: Engine, record: HandleRecord.HandleRecord) =>
  Effect.gen(function* () {
    const now = yield* ctx.store.now
    return yield* commit(ctx, record, Transition.Event.Abandoned({ now }), "intent").pipe(
      Effect.catchTag("LeaseLost", () => Effect.succeed(record)),
    )
  })

/**
 * Records the intent (never taking the lease), then lets the row's driver act on it: this
 * process's driver is woken at once; with no driver anywhere, this process starts one; the
 * instance holding the row finds the intent within a reconciler tick (`pendingIntents`, see
 * reconciler.ts). Returns once the cancel was sent, or
 * when it cannot be sent yet (no task id so far, or another instance drives the row).
 */
export const cancel =
  (ctx: Engine): TaskClient.TaskClient["cancel"] =>
  (key, scope = ctx.defaultScope) =>
    Effect.gen(function* () {
      const record = yield* load(ctx, scope, key)
      if (record.status === "in_doubt") return yield* abandonRecord(ctx, record)
      if (HandleRecord.isTerminal(record.status)) return record
      const now = yield* ctx.store.now
      const intended = yield* commit(ctx, record, Transition.Event.CancelRequested({ now }), "intent").pipe(
        Effect.catchTag("LeaseLost", () => Effect.succeed(record)),
      )
      const id = rowId(scope, key)
      let woken = false
      for (;;) {
        const current = Option.getOrElse(yield* ctx.store.get(scope, key), () => intended)
        const done =
          Outcome.fromRecord(current) !== undefined ||
          current.cancel === null ||
          current.cancel.sent ||
          current.taskId === null ||
          // The send failed; the driver retries it with backoff, no need to wait for that here.
          current.attempts > intended.attempts
        if (done) return current
        if (!woken && (yield* wake(ctx, scope, key))) woken = true
        else if (!ctx.drivers.has(id)) {
          const at = yield* ctx.store.now
          if (leasedByOther(ctx, current, at) || ctx.stepping.has(id)) return current
          const leased = yield* takeLease(ctx, current)
          if (Option.isNone(leased)) return current
          yield* ensureDriving(ctx, leased.value)
        }
        yield* ctx.signals.wait(id, 1_000)
      }
    })

export const abandon =
  (ctx: Engine): TaskClient.TaskClient["abandon"] =>
  (key, scope = ctx.defaultScope) =>
    Effect.flatMap(
      load(ctx, scope, key),
      (
        record,
      ): Effect.Effect<
        HandleRecord.HandleRecord,
        ClientError.NotInDoubt | ClientError.UnknownKey | HandleStore.StoreError
      > =>
        record.status === "in_doubt"
          ? abandonRecord(ctx, record)
          : Effect.fail(new ClientError.NotInDoubt({ key, status: record.status })),
    )

/**
 * Sends an in-doubt call again. Never while its first answer can still arrive: a driver of this
 * process waiting out a late answer, or another instance holding the row, is waited for first.
 */
export const reissue =
  (ctx: Engine): TaskClient.TaskClient["reissue"] =>
  (key, scope = ctx.defaultScope) =>
    Effect.gen(function* () {
      const id = rowId(scope, key)
      for (;;) {
        const local = ctx.drivers.get(id)
        if (local !== undefined) yield* awaitLatch(local.ended)
        const record = yield* load(ctx, scope, key)
        if (record.status !== "in_doubt")
          return yield* Effect.fail(
            new ClientError.CannotReissue({ key, status: record.status, reason: "not_in_doubt" }),
          )
        const endpoint = endpointOf(ctx, record)
        if (endpoint === undefined) {
          return yield* Effect.fail(new ClientError.UnknownServer({ server: record.serverId }))
        }
        if (record.arguments === null) {
          return yield* Effect.fail(
            new ClientError.CannotReissue({ key, status: record.status, reason: "arguments_not_stored" }),
          )
        }
        // As on the first call: a tool the server now defines in a way that must not be called
        // is refused before the reissue is written.
        if (ctx.wire.checkTool !== undefined) yield* ctx.wire.checkTool(endpoint, record.tool)
        const now = yield* ctx.store.now
        if (leasedByOther(ctx, record, now)) {
          yield* ctx.signals.wait(id, recheckMs(ctx, record, now))
          continue
        }
        const reissued = yield* commit(ctx, record, Transition.Event.Reissued({ now }), "action").pipe(
          Effect.catchTag("LeaseLost", () => Effect.succeed(undefined)),
        )
        if (reissued === undefined) continue
        if (reissued.status !== "pending")
          return yield* Effect.fail(
            new ClientError.CannotReissue({ key, status: reissued.status, reason: "not_in_doubt" }),
          )
        yield* ensureDriving(ctx, reissued, record.arguments)
        return handleOf(ctx, reissued, true)
      }
    })
