/**
 * The machinery behind TaskClient: dispatch, the per-row driver loop, the background
 * reconciler, and the commit helper that turns `Transition.step` into durable writes.
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as HandleRecord from "../HandleRecord.js"
import * as HandleStore from "../HandleStore.js"
import * as Json from "../Json.js"
import * as Outcome from "../Outcome.js"
import * as Polling from "../Polling.js"
import * as Redaction from "../Redaction.js"
import * as ServerIdentity from "../ServerIdentity.js"
import type * as TaskClient from "../TaskClient.js"
import { InvalidKey, KeyReused, NotInDoubt, UnknownKey, UnknownServer } from "../TaskClient.js"
import * as Transition from "../Transition.js"
import * as Wire from "../Wire.js"

const rowId = (scope: string, key: string) => JSON.stringify([scope, key])

type LeaseMode = "driver" | "sweep" | "handoff"

/** Who the writes of the current fiber lease a row to (see `withLease`). */
const leaseMode = FiberRef.unsafeMake<LeaseMode>("driver")

/** The row changed hands: another live instance holds its lease now. */
class LeaseLost {
  readonly _tag = "LeaseLost"
}

interface Driver {
  readonly done: Deferred.Deferred<Outcome.Outcome, HandleStore.StoreError>
  fiber: Fiber.RuntimeFiber<void, HandleStore.StoreError> | undefined
  /** True while `tools/call` is in flight: cancel must not interrupt a dispatch. */
  dispatching: boolean
  /** Completed once the dispatch has been answered (or there was none to make). */
  readonly dispatched: Deferred.Deferred<void>
}

const localError = (message: string, reason: string) =>
  HandleRecord.RpcError.make({ code: -32000, message, data: { "mcp-handles/local": reason } })

export const make = (
  options: TaskClient.TaskClientOptions,
): Effect.Effect<
  TaskClient.TaskClient,
  ServerIdentity.InvalidServerUrl,
  HandleStore.HandleStore | Wire.Wire | Polling.Polling | Scope.Scope
> =>
  Effect.gen(function* () {
    const store = yield* HandleStore.HandleStore
    const wire = yield* Wire.Wire
    const polling = yield* Polling.Polling
    const clientScope = yield* Effect.scope

    const owner = options.instanceId ?? "local"
    const defaultScope = options.defaultScope ?? "default"
    const leaseMs = options.leaseMs ?? 30_000
    const argumentLimits = options.argumentLimits ?? Json.defaultArgumentLimits
    const resultLimits = options.resultLimits ?? Json.defaultResultLimits

    // Servers by name and by identity: rows name their server by identity only.
    const serversByName = new Map<string, { endpoint: Wire.ServerEndpoint; id: string }>()
    const serversById = new Map<string, Wire.ServerEndpoint>()
    for (const endpoint of options.servers) {
      const id = yield* ServerIdentity.of(endpoint)
      serversByName.set(endpoint.name, { endpoint, id })
      serversById.set(id, endpoint)
    }

    const drivers = new Map<string, Driver>()
    // Rows this process has driven and whose lease it may still hold: released on close.
    const held = new Set<string>()
    // Rows the reconciler is acting on right now: nobody else starts driving them meanwhile.
    const stepping = new Set<string>()
    // One sweep at a time: two sweeps under one owner id would claim each other's rows.
    const sweepLock = yield* Effect.makeSemaphore(1)
    const idempotentTools = new Map<string, Promise<ReadonlySet<string>> | ReadonlySet<string>>()

    // ---------------------------------------------------------------------------------------
    // Durable writes
    // ---------------------------------------------------------------------------------------

    /**
     * Rows a fiber of this instance drives are leased under a name of their own, so this
     * instance's periodic sweep (which claims under `owner`, and may reclaim its own rows) never
     * takes a row from one of its own fibers. Both names are this instance's: a restart under the
     * same id takes over both at once. Leases last until a row's next poll plus `leaseMs`.
     */
    const driverOwner = `${owner}#driver`
    const ownerFor = (mode: LeaseMode) => (mode === "driver" ? driverOwner : owner)

    /** The task's last known interval, clamped: what a poll after a takeover must wait. */
    const knownInterval = (record: HandleRecord.HandleRecord) => {
      const interval = record.snapshot?.pollIntervalMs
      return interval === undefined || !Number.isFinite(interval)
        ? polling.defaultMaxMs
        : Math.min(polling.maxIntervalMs, Math.max(polling.minIntervalMs, Math.ceil(interval)))
    }

    const withLease = (record: HandleRecord.HandleRecord, now: number, mode: LeaseMode) =>
      HandleRecord.isTerminal(record.status)
        ? record
        : new HandleRecord.HandleRecord(
            {
              ...record,
              leaseOwner: ownerFor(mode),
              // A hand-off frees the row when it is due; otherwise the lease runs a while past that.
              // Never shorter than the task's interval: an instance that takes the row over after
              // the lease ran out cannot poll sooner than the interval after the holder's last poll.
              leaseExpiresAt:
                Math.max(now, record.nextPollAt ?? now) +
                (mode === "handoff" ? 0 : Math.max(leaseMs, knownInterval(record))),
            },
            true,
          )

    const leasedByOther = (record: HandleRecord.HandleRecord, now: number) =>
      record.leaseOwner !== null &&
      record.leaseOwner !== owner &&
      record.leaseOwner !== driverOwner &&
      record.leaseExpiresAt !== null &&
      record.leaseExpiresAt > now

    /**
     * Applies `event` and writes the result, compare-and-set. On a lost race it re-reads and
     * re-applies the event to the fresh row (the transition is pure, so this is safe), unless
     * another live instance holds the row now.
     */
    const commit = (
      record: HandleRecord.HandleRecord,
      event: Transition.Event,
    ): Effect.Effect<HandleRecord.HandleRecord, HandleStore.StoreError | LeaseLost> =>
      Effect.gen(function* () {
        let current = record
        for (let attempt = 0; attempt < 8; attempt++) {
          const now = yield* Clock.currentTimeMillis
          const next = Transition.step(current, event)
          if (next === current) return current
          const written = yield* Effect.either(
            store.update(withLease(next, now, yield* FiberRef.get(leaseMode))),
          )
          if (written._tag === "Right") {
            yield* notify(written.right)
            return written.right
          }
          if (written.left._tag === "StoreError") return yield* Effect.fail(written.left)
          const fresh = yield* store.get(current.scope, current.key)
          if (Option.isNone(fresh)) {
            return yield* Effect.fail(
              new HandleStore.StoreError({
                operation: "update",
                message: "the row disappeared while in use",
              }),
            )
          }
          if (leasedByOther(fresh.value, now)) return yield* Effect.fail(new LeaseLost())
          current = fresh.value
        }
        return yield* Effect.fail(
          new HandleStore.StoreError({
            operation: "update",
            message: "too many concurrent writers on one row",
          }),
        )
      })

    /** Takes the lease of a row nobody else is driving; None when another live instance is. */
    const takeLease = (record: HandleRecord.HandleRecord) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        if (leasedByOther(record, now)) return Option.none<HandleRecord.HandleRecord>()
        // Whoever held the row last may have polled at its due time without recording it: an
        // overdue row is polled one interval after that at the earliest.
        const overdue = record.nextPollAt !== null && record.nextPollAt < now && record.taskId !== null
        const taken = overdue
          ? new HandleRecord.HandleRecord(
              { ...record, nextPollAt: Math.max(now, (record.nextPollAt ?? now) + knownInterval(record)) },
              true,
            )
          : record
        const written = yield* Effect.either(store.update(withLease(taken, now, "driver")))
        if (written._tag === "Right") return Option.some(written.right)
        if (written.left._tag === "StoreError") return yield* Effect.fail(written.left)
        return Option.none<HandleRecord.HandleRecord>()
      })

    // Waiters for rows driven by this process, woken on every write that settles a row.
    const watchers = new Map<string, Array<Deferred.Deferred<Outcome.Outcome>>>()
    const notify = (record: HandleRecord.HandleRecord) =>
      Effect.suspend(() => {
        const outcome = Outcome.fromRecord(record)
        const id = rowId(record.scope, record.key)
        const waiting = watchers.get(id)
        if (outcome === undefined || waiting === undefined) return Effect.void
        watchers.delete(id)
        return Effect.forEach(waiting, (deferred) => Deferred.succeed(deferred, outcome), { discard: true })
      })

    const load = (scope: string, key: string) =>
      Effect.flatMap(store.get(scope, key), (found) =>
        Option.match(found, {
          onNone: () => Effect.fail(new UnknownKey({ scope, key })),
          onSome: Effect.succeed,
        }),
      )

    const endpointOf = (record: HandleRecord.HandleRecord) => serversById.get(record.serverId)

    // ---------------------------------------------------------------------------------------
    // Dispatch: tools/call, multi round-trip input, classification of failures
    // ---------------------------------------------------------------------------------------

    const askInput = (
      handler: TaskClient.InputHandler | undefined,
      record: HandleRecord.HandleRecord,
      requests: Readonly<Record<string, Json.JsonValue>>,
    ) =>
      Effect.gen(function* () {
        const answers: Record<string, Json.JsonValue> = {}
        if (handler === undefined) return answers
        for (const [inputKey, request] of Object.entries(requests)) {
          const answer = yield* handler({
            scope: record.scope,
            key: record.key,
            tool: record.tool,
            inputKey,
            request,
          }).pipe(
            Effect.flatMap((value) => Json.validate(`answer to input ${inputKey}`, value, argumentLimits)),
            Effect.tapError((error) =>
              Effect.logWarning("input handler failed; the request stays unanswered", {
                key: record.key,
                inputKey,
                error: String(error),
              }),
            ),
            Effect.option,
          )
          if (Option.isSome(answer)) answers[inputKey] = answer.value
        }
        return answers
      })

    const pollDelay = (task: Wire.TaskState, record: HandleRecord.HandleRecord) =>
      Polling.interval(
        polling,
        task.pollIntervalMs,
        task.pollIntervalMs === undefined ? record.pollsWithoutInterval + 1 : 0,
      )

    const ttlDeadline = (record: HandleRecord.HandleRecord) =>
      record.snapshot === null || record.snapshot.ttlMs === null
        ? undefined
        : record.snapshot.receivedAt + record.snapshot.ttlMs

    /**
     * A final result over the configured limit is not stored: the task is recorded as failed with
     * a local error saying why, and the oversize result is dropped.
     */
    const checkResult = (task: Wire.TaskState): Effect.Effect<Wire.TaskState> =>
      task.status !== "completed" || task.result === undefined
        ? Effect.succeed(task)
        : Json.validate("task result", task.result, resultLimits).pipe(
            Effect.as(task),
            Effect.catchAll((rejected) => {
              const { result: _dropped, ...rest } = task
              return Effect.succeed(
                new Wire.TaskState({
                  ...rest,
                  status: "failed",
                  error: localError(rejected.message, "result_rejected"),
                }),
              )
            }),
          )

    const applyAnswer = (
      record: HandleRecord.HandleRecord,
      answer: Wire.CallAnswer,
    ): Effect.Effect<HandleRecord.HandleRecord, HandleStore.StoreError | LeaseLost> =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        if (answer._tag === "Complete") {
          const checked = yield* Effect.either(Json.validate("tool result", answer.result, resultLimits))
          if (checked._tag === "Left") {
            // The call ran, but we refuse to store what it returned.
            return yield* commit(
              record,
              Transition.Event.CallRejected({
                error: localError(checked.left.message, "result_rejected"),
                now,
              }),
            )
          }
          return yield* commit(record, Transition.Event.CallCompleted({ result: answer.result, now }))
        }
        if (answer._tag === "Task") {
          // A seed that claims to be terminal without its payload is recorded as running: the
          // first poll fetches the result or error.
          const task =
            (answer.task.status === "completed" && answer.task.result === undefined) ||
            (answer.task.status === "failed" && answer.task.error === undefined)
              ? new Wire.TaskState({ ...answer.task, status: "working" })
              : answer.task
          const delay = yield* pollDelay(task, record)
          return yield* commit(
            record,
            Transition.Event.TaskCreated({ task: yield* checkResult(task), now, nextPollAt: now + delay }),
          )
        }
        return record
      })

    /**
     * Sends `tools/call` until the server answers something decisive. The row is `pending` and
     * leased to us throughout; when this returns it is working, input_required, terminal or in
     * doubt.
     */
    const dispatch = (
      initial: HandleRecord.HandleRecord,
      endpoint: Wire.ServerEndpoint,
      args: Json.JsonObject,
      handler: TaskClient.InputHandler | undefined,
    ): Effect.Effect<HandleRecord.HandleRecord, HandleStore.StoreError | LeaseLost> =>
      Effect.gen(function* () {
        let record = initial
        let round: Pick<Wire.CallToolRequest, "inputResponses" | "requestState"> = {}
        for (let inputRounds = 0; ; ) {
          if (record.status !== "pending") return record
          const request: Wire.CallToolRequest = {
            name: record.tool,
            arguments: args,
            idempotencyKey: record.key,
            ...round,
          }
          const call = yield* Effect.forkIn(Effect.either(wire.callTool(endpoint, request)), clientScope)
          const answered =
            options.callTimeout === undefined
              ? Option.some(yield* Fiber.join(call))
              : yield* Fiber.join(call).pipe(Effect.timeoutOption(options.callTimeout))
          const now = yield* Clock.currentTimeMillis
          if (Option.isNone(answered)) {
            record = yield* commit(
              record,
              Transition.Event.CallInDoubt({ reason: "no answer within the call timeout", now }),
            )
            yield* Effect.forkIn(
              Effect.locally(recordLateAnswer(record, call), leaseMode, "driver"),
              clientScope,
            )
            return record
          }
          const result = answered.value
          if (result._tag === "Right") {
            const answer = result.right
            if (answer._tag !== "InputRequired") return yield* applyAnswer(record, answer)
            if (++inputRounds > 16) {
              return yield* commit(
                record,
                Transition.Event.CallAbandonedUnsent({
                  error: localError("the server kept asking for input before creating a task", "input_loop"),
                  now,
                }),
              )
            }
            const answers = yield* askInput(handler, record, answer.inputRequests)
            if (Object.keys(answers).length < Object.keys(answer.inputRequests).length) {
              // Nothing was launched: without answers the stateless server has nothing to go on.
              return yield* commit(
                record,
                Transition.Event.CallAbandonedUnsent({
                  error: localError("the server asked for input that was not given", "input_unanswered"),
                  now,
                }),
              )
            }
            round = {
              inputResponses: answers,
              ...(answer.requestState === undefined ? {} : { requestState: answer.requestState }),
            }
            continue
          }
          const error = result.left
          switch (error._tag) {
            case "RpcErrorAnswer":
              return yield* commit(record, Transition.Event.CallRejected({ error: error.error, now }))
            case "MalformedAnswer":
              if (error.taskId !== undefined) {
                // The server created a task and named it; the rest of its answer is broken. Keep
                // the id and learn the rest by polling, rather than orphan the task.
                const task = new Wire.TaskState({
                  taskId: error.taskId,
                  status: "working",
                  createdAt: now,
                  lastUpdatedAt: now,
                  ttlMs: null,
                })
                return yield* applyAnswer(record, { _tag: "Task", task })
              }
              return yield* commit(record, Transition.Event.CallInDoubt({ reason: error.reason, now }))
            case "NoAnswer":
              return yield* commit(record, Transition.Event.CallInDoubt({ reason: error.reason, now }))
            case "Unauthorized":
              return yield* commit(
                record,
                Transition.Event.CallAbandonedUnsent({
                  error: localError(
                    `the server refused the credentials (HTTP ${error.status})`,
                    "unauthorized",
                  ),
                  now,
                }),
              )
            case "NotSent":
            case "ServerBusy": {
              const reason =
                error._tag === "NotSent" ? `not sent: ${error.reason}` : `server busy (HTTP ${error.status})`
              if (record.attempts + 1 >= polling.maxDispatchAttempts) {
                return yield* commit(
                  record,
                  Transition.Event.CallAbandonedUnsent({
                    error: localError(`gave up dispatching: ${reason}`, "unsent"),
                    now,
                  }),
                )
              }
              const delay = yield* Polling.retryDelay(
                polling,
                record.attempts + 1,
                error._tag === "ServerBusy" ? error.retryAfterMs : undefined,
              )
              record = yield* commit(
                record,
                Transition.Event.CallDeferred({ reason, now, retryAt: now + delay }),
              )
              yield* Effect.sleep(Duration.millis(delay))
            }
          }
        }
      })

    /** A `tools/call` answer that arrives after we marked the call in doubt still carries the handle. */
    const recordLateAnswer = (
      record: HandleRecord.HandleRecord,
      call: Fiber.RuntimeFiber<
        | { readonly _tag: "Left"; readonly left: Wire.WireError }
        | { readonly _tag: "Right"; readonly right: Wire.CallAnswer }
      >,
    ) =>
      Effect.gen(function* () {
        const result = yield* Fiber.join(call)
        if (result._tag === "Left" || result.right._tag === "InputRequired") return
        const fresh = yield* load(record.scope, record.key)
        const applied = yield* applyAnswer(fresh, result.right)
        if (applied !== fresh) yield* ensureDriving(applied)
      }).pipe(Effect.ignoreLogged)

    // ---------------------------------------------------------------------------------------
    // Driving a task: one step at a time
    // ---------------------------------------------------------------------------------------

    const pollFailure = (record: HandleRecord.HandleRecord, error: Wire.WireError) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        if (error._tag === "RpcErrorAnswer" && error.error.code === Wire.invalidParams) {
          return yield* commit(record, Transition.Event.TaskGone({ now }))
        }
        const deadline = ttlDeadline(record)
        if (deadline !== undefined && now >= deadline) {
          return yield* commit(record, Transition.Event.TtlElapsed({ now }))
        }
        const problem = describe(error)
        if (error._tag === "Unauthorized" || error._tag === "MalformedAnswer") {
          yield* Effect.logWarning("task poll failed; the task stays open", { key: record.key, problem })
        }
        const backoff = yield* Polling.retryDelay(
          polling,
          record.attempts + 1,
          error._tag === "ServerBusy" ? error.retryAfterMs : undefined,
        )
        // The failed request may have reached the server (only its answer was lost), so the
        // retry keeps the task's interval too: never sooner than the server asked.
        const interval = yield* Polling.interval(
          polling,
          record.snapshot?.pollIntervalMs,
          record.pollsWithoutInterval,
        )
        const delay = Math.max(backoff, interval)
        return yield* commit(record, Transition.Event.PollFailed({ problem, now, retryAt: now + delay }))
      })

    const sendCancel = (record: HandleRecord.HandleRecord, endpoint: Wire.ServerEndpoint, taskId: string) =>
      Effect.gen(function* () {
        const sent = yield* Effect.either(wire.cancelTask(endpoint, taskId))
        const now = yield* Clock.currentTimeMillis
        if (sent._tag === "Right") {
          const delay = yield* Polling.interval(
            polling,
            record.snapshot?.pollIntervalMs,
            record.pollsWithoutInterval,
          )
          return yield* commit(record, Transition.Event.CancelSent({ now, nextPollAt: now + delay }))
        }
        return yield* pollFailure(record, sent.left)
      })

    const answerInput = (
      record: HandleRecord.HandleRecord,
      endpoint: Wire.ServerEndpoint,
      taskId: string,
      handler: TaskClient.InputHandler | undefined,
    ) =>
      Effect.gen(function* () {
        const outstanding = record.inputRequests ?? {}
        const unasked = Object.fromEntries(
          Object.entries(outstanding).filter(([inputKey]) => record.answers[inputKey] === undefined),
        )
        let current = record
        const fresh = yield* askInput(handler, record, unasked)
        if (Object.keys(fresh).length > 0) {
          const now = yield* Clock.currentTimeMillis
          current = yield* commit(current, Transition.Event.InputAnswered({ answers: fresh, now }))
        }
        // Everything answered but not acknowledged: new answers, and any a crash left unsent.
        const unacknowledged = Object.entries(current.answers).filter(([, answer]) => !answer.acknowledged)
        if (unacknowledged.length === 0) return current
        const responses = Object.fromEntries(
          unacknowledged.map(([inputKey, answer]) => [inputKey, answer.response]),
        )
        const sent = yield* Effect.either(wire.updateTask(endpoint, taskId, responses))
        if (sent._tag === "Left") return yield* pollFailure(current, sent.left)
        const now = yield* Clock.currentTimeMillis
        return yield* commit(
          current,
          Transition.Event.InputAcknowledged({ keys: Object.keys(responses), now }),
        )
      })

    /**
     * One action on a due row: finish a cancel, answer input, or poll. Never waits for the row
     * to become due; callers decide when to call it.
     */
    const advance = (
      record: HandleRecord.HandleRecord,
      handler: TaskClient.InputHandler | undefined,
    ): Effect.Effect<HandleRecord.HandleRecord, HandleStore.StoreError | LeaseLost> =>
      Effect.gen(function* () {
        const endpoint = endpointOf(record)
        const taskId = record.taskId
        if (taskId === null || (record.status !== "working" && record.status !== "input_required"))
          return record
        if (endpoint === undefined) {
          // The server is not configured in this process: leave the row for one that has it.
          const now = yield* Clock.currentTimeMillis
          return yield* commit(
            record,
            Transition.Event.PollFailed({
              problem: `server ${record.serverId} is not configured here`,
              now,
              retryAt: now + polling.maxIntervalMs,
            }),
          )
        }
        if (record.cancel !== null && !record.cancel.sent) return yield* sendCancel(record, endpoint, taskId)
        const hasUnsent = Object.values(record.answers).some((answer) => !answer.acknowledged)
        if (record.status === "input_required" && (hasUnsent || handler !== undefined)) {
          const answered = yield* answerInput(record, endpoint, taskId, handler)
          if (answered.status !== "input_required" || answered.nextPollAt !== record.nextPollAt)
            return answered
          record = answered
        }
        const polled = yield* Effect.either(wire.getTask(endpoint, taskId))
        if (polled._tag === "Left") return yield* pollFailure(record, polled.left)
        const task = yield* checkResult(polled.right)
        const now = yield* Clock.currentTimeMillis
        if (task.taskId !== taskId) {
          return yield* pollFailure(
            record,
            new Wire.MalformedAnswer({ method: "tasks/get", reason: "the answer is about another task" }),
          )
        }
        const deadline = ttlDeadline(record)
        const stillOpen = task.status === "working" || task.status === "input_required"
        if (stillOpen && deadline !== undefined && now >= deadline && task.ttlMs === record.snapshot?.ttlMs) {
          return yield* commit(record, Transition.Event.TtlElapsed({ now }))
        }
        const delay = yield* pollDelay(task, record)
        const next = yield* commit(record, Transition.Event.Polled({ task, now, nextPollAt: now + delay }))
        if (next.stuckSince !== null && now - next.stuckSince >= polling.stuckAfterMs) {
          yield* Effect.logWarning("task waits on input that was already answered and acknowledged", {
            key: next.key,
            taskId: Redaction.taskId(taskId),
          })
        }
        return next
      })

    /** Drives a row until it rests (terminal or in doubt), sleeping until each poll is due. */
    const drive = (
      initial: HandleRecord.HandleRecord,
      handler: TaskClient.InputHandler | undefined,
    ): Effect.Effect<HandleRecord.HandleRecord, HandleStore.StoreError | LeaseLost> =>
      Effect.gen(function* () {
        let record = initial
        while (Outcome.fromRecord(record) === undefined && record.status !== "pending") {
          const now = yield* Clock.currentTimeMillis
          const due = record.cancel !== null && !record.cancel.sent ? now : (record.nextPollAt ?? now)
          if (due > now) yield* Effect.sleep(Duration.millis(due - now))
          record = yield* advance(record, handler)
        }
        return record
      })

    /**
     * Moves an in-doubt call back to pending when policy and the tool allow a re-send; the caller
     * dispatches it. None when the call stays in doubt.
     */
    const reissueByPolicy = (record: HandleRecord.HandleRecord) =>
      Effect.gen(function* () {
        if (options.inDoubtPolicy !== "reissue-if-idempotent" || record.status !== "in_doubt") {
          return Option.none<HandleRecord.HandleRecord>()
        }
        const endpoint = endpointOf(record)
        if (endpoint === undefined || record.arguments === null)
          return Option.none<HandleRecord.HandleRecord>()
        if (!(yield* isIdempotent(endpoint, record.tool))) return Option.none<HandleRecord.HandleRecord>()
        yield* Effect.logInfo("re-sending an in-doubt call of an idempotent tool", { key: record.key })
        const now = yield* Clock.currentTimeMillis
        return Option.some(yield* commit(record, Transition.Event.Reissued({ now })))
      })

    const isIdempotent = (endpoint: Wire.ServerEndpoint, tool: string) =>
      Effect.gen(function* () {
        const cached = idempotentTools.get(endpoint.name)
        if (cached instanceof Set) return cached.has(tool)
        const tools = yield* Effect.either(wire.listTools(endpoint))
        if (tools._tag === "Left") return false
        const idempotent = new Set(tools.right.filter((t) => t.idempotentHint).map((t) => t.name))
        idempotentTools.set(endpoint.name, idempotent)
        return idempotent.has(tool)
      })

    /**
     * Makes sure a fiber of this process drives the row (dispatching first when it is pending
     * and `args` are given) and returns the deferred outcome.
     */
    const ensureDriving = (
      record: HandleRecord.HandleRecord,
      args?: Json.JsonObject,
      handler: TaskClient.InputHandler | undefined = options.onInputRequired,
    ): Effect.Effect<Driver> =>
      Effect.gen(function* () {
        const id = rowId(record.scope, record.key)
        const existing = drivers.get(id)
        if (existing !== undefined) return existing
        // Registered before any yield, so no other fiber can start a second driver meanwhile.
        const driver: Driver = {
          done: Deferred.unsafeMake<Outcome.Outcome, HandleStore.StoreError>(FiberId.none),
          fiber: undefined,
          dispatching: record.status === "pending",
          dispatched: Deferred.unsafeMake<void>(FiberId.none),
        }
        drivers.set(id, driver)
        held.add(id)
        const endpoint = endpointOf(record)
        const work = Effect.gen(function* () {
          let current = record
          while (current.status === "pending" && endpoint !== undefined && args !== undefined) {
            driver.dispatching = true
            current = yield* dispatch(current, endpoint, args, handler)
            driver.dispatching = false
            current = Option.getOrElse(yield* reissueByPolicy(current), () => current)
          }
          yield* Deferred.succeed(driver.dispatched, undefined)
          current = yield* drive(current, handler)
          const outcome = Outcome.fromRecord(current)
          if (outcome !== undefined) yield* Deferred.succeed(driver.done, outcome)
        })
        yield* startDriver(id, driver, work)
        return driver
      })

    const startDriver = (
      id: string,
      driver: Driver,
      work: Effect.Effect<void, HandleStore.StoreError | LeaseLost>,
    ): Effect.Effect<void> =>
      Effect.gen(function* () {
        driver.fiber = yield* work.pipe(
          // A driver may be started from a sweep's step (a re-issue): its writes are a driver's.
          Effect.locally(leaseMode, "driver"),
          Effect.catchTag("LeaseLost", () => Effect.logDebug("lease lost; another instance drives the row")),
          Effect.onExit((exit) =>
            Effect.suspend(() => {
              // A fiber interrupted to make way for a new one (cancel) hands over the driver entry.
              if (Exit.isInterrupted(exit) && drivers.get(id) === driver && driver.fiber === undefined) {
                return Effect.void
              }
              if (drivers.get(id) === driver) drivers.delete(id)
              Deferred.unsafeDone(driver.dispatched, Exit.void)
              if (Exit.isSuccess(exit)) held.delete(id)
              return Exit.isFailure(exit) && !Exit.isInterrupted(exit)
                ? Deferred.failCause(driver.done, exit.cause as never)
                : Effect.void
            }),
          ),
          Effect.forkIn(clientScope),
        )
      })

    // ---------------------------------------------------------------------------------------
    // Waiting for an outcome
    // ---------------------------------------------------------------------------------------

    const settle = (
      key: string,
      scope = defaultScope,
    ): Effect.Effect<Outcome.Outcome, UnknownKey | UnknownServer | HandleStore.StoreError> =>
      Effect.gen(function* () {
        for (;;) {
          const record = yield* load(scope, key)
          const rested = Outcome.fromRecord(record)
          if (rested !== undefined) return rested
          const local = drivers.get(rowId(scope, key))
          if (local !== undefined) return yield* Deferred.await(local.done)
          const now = yield* Clock.currentTimeMillis
          if (!leasedByOther(record, now) && !stepping.has(rowId(scope, key))) {
            if (record.status === "pending") {
              // Its dispatcher is gone (this process never had it, or it died): in doubt.
              yield* commit(record, Transition.Event.Recovered({ now })).pipe(
                Effect.catchTag("LeaseLost", () => Effect.void),
              )
              continue
            }
            if (endpointOf(record) === undefined) {
              // Nobody drives it and this client cannot reach its server: waiting would be forever.
              return yield* Effect.fail(new UnknownServer({ server: record.serverId }))
            }
            const leased = yield* takeLease(record)
            if (Option.isSome(leased)) {
              yield* ensureDriving(leased.value)
              continue
            }
          }
          // Another live instance drives it: wait for a local write or re-read from the store.
          const waiter = yield* Deferred.make<Outcome.Outcome>()
          const id = rowId(scope, key)
          watchers.set(id, [...(watchers.get(id) ?? []), waiter])
          const wait = Math.max(polling.minIntervalMs, Math.min(1_000, (record.leaseExpiresAt ?? now) - now))
          const woke = yield* Deferred.await(waiter).pipe(Effect.timeoutOption(Duration.millis(wait)))
          if (Option.isSome(woke)) return woke.value
        }
      })

    const handleOf = (record: HandleRecord.HandleRecord, launched: boolean): TaskClient.Handle => ({
      key: record.key,
      scope: record.scope,
      launched,
      record,
      outcome: settle(record.key, record.scope).pipe(
        Effect.catchTags({
          UnknownKey: () =>
            Effect.fail(new HandleStore.StoreError({ operation: "settle", message: "the row was deleted" })),
          UnknownServer: (error) =>
            Effect.fail(new HandleStore.StoreError({ operation: "settle", message: error.message })),
        }),
      ),
    })

    // ---------------------------------------------------------------------------------------
    // The public operations
    // ---------------------------------------------------------------------------------------

    const callTool: TaskClient.TaskClient["callTool"] = (serverName, tool, rawArgs, callOptions = {}) =>
      Effect.gen(function* () {
        const server = serversByName.get(serverName)
        if (server === undefined) return yield* Effect.fail(new UnknownServer({ server: serverName }))
        const validated = yield* Json.validate("arguments", rawArgs, argumentLimits)
        if (validated === null || typeof validated !== "object" || Array.isArray(validated)) {
          return yield* Effect.fail(
            new Json.InvalidJson({ what: "arguments", reason: "must be a JSON object" }),
          )
        }
        const args = validated as Json.JsonObject
        const argumentsHash = yield* Json.hash({ tool, arguments: args })
        const scope = yield* checkName("scope", callOptions.scope ?? defaultScope)
        const key = yield* checkName("key", callOptions.key ?? crypto.randomUUID())
        const now = yield* Clock.currentTimeMillis
        const { record, created } = yield* store.begin({
          scope,
          key,
          serverId: server.id,
          tool,
          arguments: options.storeArguments === "hash" ? null : args,
          argumentsHash,
          owner: driverOwner,
          leaseMs,
          now,
        })
        if (!created) {
          if (
            record.serverId !== server.id ||
            record.tool !== tool ||
            record.argumentsHash !== argumentsHash
          ) {
            return yield* Effect.fail(
              new KeyReused({
                key,
                reason: `it names a call of ${record.tool} on ${record.serverId} with other arguments`,
              }),
            )
          }
          return handleOf(record, false)
        }
        const driver = yield* ensureDriving(
          record,
          args,
          callOptions.onInputRequired ?? options.onInputRequired,
        )
        // Return once the dispatch has been answered: the task id is durable by then.
        yield* Deferred.await(driver.dispatched)
        const current = yield* store.get(scope, key)
        return handleOf(
          Option.getOrElse(current, () => record),
          true,
        )
      })

    const cancel: TaskClient.TaskClient["cancel"] = (key, scope = defaultScope) =>
      Effect.gen(function* () {
        const record = yield* load(scope, key)
        if (record.status === "in_doubt") return yield* abandonRecord(record)
        if (HandleRecord.isTerminal(record.status)) return record
        const id = rowId(scope, key)
        const local = drivers.get(id)
        // Stop polling at once; a dispatch in flight is left to finish (it records the task id,
        // and its driver then sends the cancel first).
        if (local !== undefined && !local.dispatching && local.fiber !== undefined) {
          const fiber = local.fiber
          local.fiber = undefined
          yield* Fiber.interrupt(fiber)
        }
        const now = yield* Clock.currentTimeMillis
        const fresh = yield* load(scope, key)
        const intended = yield* commit(fresh, Transition.Event.CancelRequested({ now })).pipe(
          Effect.catchTag("LeaseLost", () =>
            // Another instance drives it: record the intent anyway; the driver sends the cancel.
            store.update(Transition.step(fresh, Transition.Event.CancelRequested({ now }))),
          ),
          Effect.catchTag("VersionConflict", () => load(scope, key)),
          Effect.catchTag("UnknownKey", (e) =>
            Effect.fail(new HandleStore.StoreError({ operation: "cancel", message: e.message })),
          ),
        )
        const endpoint = endpointOf(intended)
        let sent = intended
        if (intended.taskId !== null && endpoint !== undefined && intended.cancel?.sent === false) {
          sent = yield* sendCancel(intended, endpoint, intended.taskId).pipe(
            Effect.catchTag("LeaseLost", () => Effect.succeed(intended)),
          )
        }
        if (local !== undefined && !local.dispatching && drivers.get(id) === local) {
          yield* startDriver(
            id,
            local,
            Effect.gen(function* () {
              const settled = yield* drive(sent, options.onInputRequired)
              const outcome = Outcome.fromRecord(settled)
              if (outcome !== undefined) yield* Deferred.succeed(local.done, outcome)
            }),
          )
        } else if (
          local === undefined &&
          Outcome.fromRecord(sent) === undefined &&
          !leasedByOther(sent, now)
        ) {
          yield* ensureDriving(sent)
        }
        return sent
      })

    const abandonRecord = (record: HandleRecord.HandleRecord) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        return yield* commit(record, Transition.Event.Abandoned({ now })).pipe(
          Effect.catchTag("LeaseLost", () => Effect.succeed(record)),
        )
      })

    const abandon: TaskClient.TaskClient["abandon"] = (key, scope = defaultScope) =>
      Effect.flatMap(
        load(scope, key),
        (record): Effect.Effect<HandleRecord.HandleRecord, NotInDoubt | HandleStore.StoreError> =>
          record.status === "in_doubt"
            ? abandonRecord(record)
            : Effect.fail(new NotInDoubt({ key, status: record.status })),
      )

    const reissue: TaskClient.TaskClient["reissue"] = (key, scope = defaultScope) =>
      Effect.gen(function* () {
        const record = yield* load(scope, key)
        if (record.status !== "in_doubt")
          return yield* Effect.fail(new NotInDoubt({ key, status: record.status }))
        const endpoint = endpointOf(record)
        if (endpoint === undefined) return yield* Effect.fail(new UnknownServer({ server: record.serverId }))
        if (record.arguments === null) {
          return yield* Effect.fail(
            new NotInDoubt({ key, status: "in_doubt (arguments were stored as a hash only)" }),
          )
        }
        const now = yield* Clock.currentTimeMillis
        const reissued = yield* commit(record, Transition.Event.Reissued({ now })).pipe(
          Effect.catchTag("LeaseLost", () =>
            Effect.fail(new NotInDoubt({ key, status: "driven by another instance" })),
          ),
        )
        yield* ensureDriving(reissued, record.arguments)
        return handleOf(reissued, true)
      })

    // ---------------------------------------------------------------------------------------
    // The reconciler
    // ---------------------------------------------------------------------------------------

    const batchSize = (options.background === false ? undefined : options.background?.batchSize) ?? 100
    const concurrency = (options.background === false ? undefined : options.background?.concurrency) ?? 16
    // Rows per bulk spread statement at boot: one fsync per batch, bounded work per statement
    // (5,000 rows: about 1.1 s for 100,000 rows in SQLite, against 1.7 s with 1,000; see B3).
    const spreadBatch = 5_000

    /**
     * Claims due rows in batches and acts on each once. With `spread`, overdue live tasks are
     * rescheduled over one interval instead of all polled now (no thundering herd after a boot).
     */
    const sweep = (spread: boolean) =>
      Effect.gen(function* () {
        let resumed = 0
        let inDoubt = 0
        let reissued = 0
        // Only rows due when the sweep began: a row it reschedules or polls is not due again
        // within this sweep, so a large backlog cannot keep it claiming forever.
        const start = yield* Clock.currentTimeMillis
        if (spread) {
          // The bulk of a restart: overdue live tasks are spread over their interval in a few
          // statements, never read back one by one. What that leaves (interrupted calls, unsent
          // cancels) is claimed and handled row by row below.
          for (;;) {
            const moved = yield* store.spreadDue({
              owner,
              takeOver: [driverOwner],
              now: start,
              leaseMs,
              limit: spreadBatch,
              minIntervalMs: polling.minIntervalMs,
              maxIntervalMs: polling.maxIntervalMs,
              defaultIntervalMs: polling.defaultInitialMs,
            })
            resumed += moved
            if (moved < spreadBatch) break
          }
        }
        for (;;) {
          // A sweep takes due rows free or past their lease, and rows it stepped before; the boot
          // sweep also takes over the rows this id's fibers held before a restart. It never
          // claims a row a live fiber of this instance drives.
          const claim = (as: string) => store.claimDue({ owner: as, now: start, leaseMs, limit: batchSize })
          const mine = yield* claim(owner)
          const theirs = spread ? yield* claim(driverOwner) : []
          const claimed = [...mine, ...theirs]
          const full = mine.length === batchSize || theirs.length === batchSize
          let acted = 0
          yield* Effect.forEach(
            claimed,
            (record) =>
              Effect.gen(function* () {
                const id = rowId(record.scope, record.key)
                if (drivers.has(id) || stepping.has(id)) return
                // A batch is worked through a few rows at a time; a row whose lease ran out while
                // it waited may belong to another instance by now.
                const now = yield* Clock.currentTimeMillis
                if (record.leaseExpiresAt !== null && record.leaseExpiresAt <= now) return
                // Sweeps run one at a time, so only this step can have added the id.
                stepping.add(id)
                acted++
                if (record.status === "pending") {
                  const recovered = yield* commit(record, Transition.Event.Recovered({ now }))
                  inDoubt++
                  const again = yield* reissueByPolicy(recovered)
                  if (Option.isSome(again) && again.value.arguments !== null) {
                    reissued++
                    yield* ensureDriving(again.value, again.value.arguments)
                  }
                  return
                }
                const cancelPending = record.cancel !== null && !record.cancel.sent
                // A row the bulk spread put at the very start of its window is still due: it is
                // rescheduled here (it was counted there).
                if (spread && !cancelPending) {
                  const interval = yield* Polling.interval(
                    polling,
                    record.snapshot?.pollIntervalMs,
                    record.pollsWithoutInterval,
                  )
                  const offset = yield* Random.nextIntBetween(0, Math.max(1, interval))
                  // A dead process may have polled at the due time without recording it.
                  const base = Math.max(now, (record.nextPollAt ?? now) + interval)
                  yield* commit(record, Transition.Event.Rescheduled({ now, nextPollAt: base + offset }))
                  return
                }
                resumed++
                yield* advance(record, options.onInputRequired)
              }).pipe(
                Effect.locally(leaseMode, "sweep"),
                Effect.ensuring(Effect.sync(() => stepping.delete(rowId(record.scope, record.key)))),
                Effect.catchTag("LeaseLost", () => Effect.void),
                Effect.catchTag("StoreError", (error) =>
                  Effect.logWarning("reconciler could not act on a row", {
                    key: record.key,
                    error: error.message,
                  }),
                ),
              ),
            { concurrency, discard: true },
          )
          if (!full || acted === 0) break
        }
        return { resumed, inDoubt, reissued }
      }).pipe(sweepLock.withPermits(1))

    if (options.background !== false) {
      const tickMs = options.background?.tickMs ?? 500
      // A store that cannot be reached fails one sweep, not the reconciler: it tries again on the
      // next tick, and the boot sweep (which spreads overdue polls) is retried until it succeeds.
      const tick = (spread: boolean) =>
        sweep(spread).pipe(
          Effect.as(true),
          Effect.catchTag("StoreError", (error) =>
            Effect.as(
              Effect.logWarning("reconciler sweep failed; retrying", { error: error.message }),
              false,
            ),
          ),
        )
      yield* Effect.repeat(tick(true), {
        until: (done) => done,
        schedule: Schedule.spaced(Duration.millis(tickMs)),
      }).pipe(
        Effect.zipRight(Effect.repeat(tick(false), Schedule.spaced(Duration.millis(tickMs)))),
        Effect.catchAllCause((cause) => Effect.logError("background reconciler stopped", cause)),
        Effect.forkIn(clientScope),
      )
    }

    /**
     * Close hands off: fibers stop, and the rows they drove are freed for the next process. A
     * poll may have been in flight when a fiber stopped, so a live task is freed at its next poll
     * time, one interval from now at the earliest; a call interrupted mid-dispatch is freed at
     * once (the next process marks it in doubt).
     */
    const handOff = (id: string) =>
      Effect.gen(function* () {
        const [scope, key] = JSON.parse(id) as [string, string]
        const found = yield* store.get(scope, key)
        if (Option.isNone(found) || found.value.leaseOwner !== driverOwner) return
        const record = found.value
        if (record.status !== "working" && record.status !== "input_required") {
          return yield* store.release(scope, key, driverOwner)
        }
        const now = yield* Clock.currentTimeMillis
        const interval = yield* Polling.interval(
          polling,
          record.snapshot?.pollIntervalMs,
          record.pollsWithoutInterval,
        )
        const nextPollAt = Math.max(record.nextPollAt ?? now, now + interval)
        yield* commit(record, Transition.Event.Rescheduled({ now, nextPollAt })).pipe(
          Effect.locally(leaseMode, "handoff"),
        )
      }).pipe(Effect.ignore)
    // Finalizers cannot be interrupted: a store that stopped answering must not hold the close up.
    yield* Effect.addFinalizer(() =>
      Effect.forEach(
        held,
        (id) => handOff(id).pipe(Effect.interruptible, Effect.timeoutOption(Duration.seconds(5))),
        { discard: true, concurrency: 16 },
      ),
    )

    return {
      callTool,
      settle,
      cancel,
      reissue,
      abandon,
      reconcile: sweep(true),
      list: (listOptions = {}) => {
        const serverId =
          listOptions.server === undefined
            ? undefined
            : (serversByName.get(listOptions.server)?.id ?? listOptions.server)
        return store.list({
          scope: listOptions.scope ?? defaultScope,
          limit: listOptions.limit ?? 100,
          ...(listOptions.statuses === undefined ? {} : { statuses: listOptions.statuses }),
          ...(serverId === undefined ? {} : { serverId }),
          ...(listOptions.cursor === undefined ? {} : { cursor: listOptions.cursor }),
        })
      },
      get: (key, scope = defaultScope) => load(scope, key),
      gc: (retention, scope) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          store.deleteSettledBefore({
            settledBefore: now - Duration.toMillis(Duration.decode(retention)),
            ...(scope === undefined ? {} : { scope }),
          }),
        ),
    } satisfies TaskClient.TaskClient
  })

// Keys and scopes are indexed text in every store and appear in logs and terminals.
const checkName = (what: "key" | "scope", name: string) =>
  name.length === 0 || name.length > 512
    ? Effect.fail(new InvalidKey({ what, reason: "must be 1 to 512 characters" }))
    : // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
      /[\u0000-\u001f\u007f]/.test(name)
      ? Effect.fail(new InvalidKey({ what, reason: "must not contain control characters" }))
      : Effect.succeed(name)

const describe = (error: Wire.WireError): string => {
  switch (error._tag) {
    case "NotSent":
      return `not sent: ${error.reason}`
    case "NoAnswer":
      return `no answer: ${error.reason}`
    case "RpcErrorAnswer":
      return `server error ${error.error.code}: ${error.error.message}`
    case "ServerBusy":
      return `server busy (HTTP ${error.status})`
    case "Unauthorized":
      return `unauthorized (HTTP ${error.status}); check the credentials`
    case "MalformedAnswer":
      return `malformed answer: ${error.reason}`
  }
}
