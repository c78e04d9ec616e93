/**
 * The simulated world of one chaos sequence: the fake server in process on the TestClock, one
 * shared store, and client "processes" on it that can crash. A crash drops all in-process state
 * (fibers, caches, queues) and keeps only the store: from the crash on, the dead process's store
 * and network calls never complete, exactly as if it had been killed. Server faults are injected
 * between the client's `fetch` and the server, one shot each.
 *
 * @since 0.1.0
 */
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as HttpWire from "@mcp-handles/core/HttpWire"
import type * as Json from "@mcp-handles/core/Json"
import * as Polling from "@mcp-handles/core/Polling"
import * as TaskClient from "@mcp-handles/core/TaskClient"
import type * as Config from "@mcp-handles/fake-server/Config"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import * as Persistence from "@mcp-handles/fake-server/Persistence"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as InstanceHolds from "./internal/instance-holds.js"
import { violated } from "./Simulation.js"
import * as Stores from "./Stores.js"
import * as Tools from "./Tools.js"
import { VirtualClock } from "./VirtualClock.js"

/** @since 0.1.0 */
export const serverUrl = "http://fake.test/mcp"

/**
 * Where a process dies. Counted from the moment it is armed.
 *
 * @since 0.1.0
 */
export type CrashPoint =
  | {
      readonly at: "fetch"
      readonly method: "tools/call" | "tasks/get" | "tasks/update" | "tasks/cancel"
      readonly nth: number
      /** `before-send`: dies as the request leaves (it never arrives). `after-answer`: the server
       * processed it, the process dies before reading the answer. */
      readonly phase: "before-send" | "after-answer"
    }
  | {
      readonly at: "store"
      /** Store methods by name: `Pick` fails to compile if the store renames one. */
      readonly op: keyof Pick<HandleStore.HandleStore, "insertOrGet" | "update" | "claimDue">
      readonly nth: number
      /** `before-write`: dies before the write. `after-write`: the write is durable, the process
       * dies before it learns so (with SQLite, so do the writes group-committed with it). */
      readonly phase: "before-write" | "after-write"
    }

/** @since 0.1.0 */
export type FaultKind =
  /** Connection refused: provably not sent. */
  | "refused"
  /** Connection reset before the server saw it: the client cannot tell it from a lost answer. */
  | "reset-before"
  /** The server processed the request; the answer is lost. */
  | "drop-after"
  | "503"
  | "429"
  /** The server processed the request, then a gateway answered 500. */
  | "500-after"
  /** The server processed the request; the answer is cut mid-JSON. */
  | "malformed-after"
  /** The server processed the request; the answer has a wrong shape (unknown status). */
  | "wrong-shape-after"
  /** A proxy answered after forwarding: the server processed the request (Envoy on an upstream reset). */
  | "502-after"
  | "503-after"
  | "504-after"
  /** A proxy timed out before the server saw the request. */
  | "504-before"
  /** The request waits `ms` before the server processes it. */
  | "slow"
  /** The server processes the request at once and answers `ms` later: a late answer. */
  | "late"

/** @since 0.1.0 */
export type FaultMethod = "tools/call" | "tasks/get" | "tasks/update" | "tasks/cancel"

/** @since 0.1.0 */
export interface ServerFault {
  readonly method: FaultMethod
  readonly kind: FaultKind
  /** For `slow` and `late`. */
  readonly ms?: number
}

/**
 * A `tools/call` answer carrying a task id that reached a live client (it must not be lost).
 *
 * @since 0.1.0
 */
export interface Delivery {
  readonly taskId: string
  readonly proc: Proc
  readonly at: number
}

/** @since 0.1.0 */
export interface Stats {
  sequences: number
  steps: number
  crashes: number
  restarts: number
  serverFaults: number
  /** Store writes failed on purpose (`factWriteFails`). */
  storeFaults: number
  serverRestarts: number
  calls: number
  settles: number
  checks: number
  kills: number
}

/** @since 0.1.0 */
export const emptyStats = (): Stats => ({
  sequences: 0,
  steps: 0,
  crashes: 0,
  restarts: 0,
  serverFaults: 0,
  storeFaults: 0,
  serverRestarts: 0,
  calls: 0,
  settles: 0,
  checks: 0,
  kills: 0,
})

/** @since 0.1.0 */
export interface Proc {
  readonly id: number
  readonly instanceId: string
  readonly background: boolean
  readonly client: TaskClient.TaskClient
  readonly scope: Scope.CloseableScope
  readonly arm: (point: CrashPoint | undefined) => void
  readonly crash: () => void
  /** Stops the process silently (end of a sequence): not counted as a crash. */
  readonly stop: () => void
  readonly dead: () => boolean
  /** Virtual time of its crash (undefined while alive, or when it was stopped). */
  readonly diedAt: () => number | undefined
}

/** @since 0.1.0 */
export interface ClientSetup {
  readonly inDoubtPolicy: "surface" | "reissue-if-idempotent"
  readonly leaseMs: number
}

/** @since 0.1.0 */
export interface World {
  readonly clock: VirtualClock
  readonly server: FakeServer.FakeServer
  readonly store: HandleStore.HandleStore
  readonly setup: ClientSetup
  readonly stats: Stats
  /** Human-readable trace of what happened, printed on failure. */
  readonly trace: Array<string>
  proc: Proc | undefined
  procCount: number
  /** Every process started, in order (each is stopped when the sequence ends). */
  readonly procs: Array<Proc>
  /** Armed one-shot server faults. */
  faults: Array<ServerFault>
  /** Armed: the next write of a fact, by any process, fails once (`factWriteFails`). */
  factWriteFault: boolean
  /** Input requests waiting for an `answer`/`refuse` step. */
  inputWaiters: Array<Deferred.Deferred<Json.JsonValue, string>>
  autoAnswer: boolean
  /** Tasks whose creating `tools/call` answer was garbled: the client never saw their interval. */
  readonly garbledCreates: Set<string>
  /** `taskId@time` of polls the server answered but whose answer the client never got. */
  readonly lostPollAnswers: Set<string>
  /** Told which rows a `deleteSettledBefore` deleted (the terminal rows settled before its cutoff). */
  onGc: (deleted: ReadonlyArray<HandleRecord.HandleRecord>, count: number) => Effect.Effect<void>
  /** Store operations under way (real I/O): a flush waits for them. */
  readonly inFlight: Stores.InFlight
  /** Task ids that reached a live client in a `tools/call` answer, by task id. */
  readonly delivered: Map<string, Delivery>
  /** Which process holds each instance id (see internal/instance-holds.ts). */
  readonly holds: InstanceHolds.Holds
}

/** Suspends forever without holding a timer (Effect.never keeps an interval alive). */
const hang: Effect.Effect<never> = Effect.async<never>(() => {})

/** @since 0.1.0 */
export const inputAnswer: Json.JsonValue = { action: "accept", content: { name: "Ada" } }

/**
 * How the sequence's clients and server are set up, whatever the model.
 *
 * @since 0.1.0
 */
export interface WorldSetup {
  readonly inDoubtPolicy: "surface" | "reissue-if-idempotent"
  /** The server deduplicates `tools/call` on the idempotency key. */
  readonly dedup: boolean
  /** The server keeps its tasks across its restarts. */
  readonly durableServer: boolean
  /** Seed of the server's and the client's random choices. */
  readonly seed: number
  /** The protocol generation the fake server speaks (default 2026-07-28). */
  readonly generation?: "2026-07-28" | "2025-11-25" | undefined
}

/**
 * A fresh world on a fresh store of `kind` (run it on a VirtualClock): the fake server with the
 * models' tools, as the setup says. Every process started in it stops when the scope closes,
 * before the store does; CHAOS_TRACE=1 then prints the trace, passing or not (to compare runs).
 *
 * @since 0.1.0
 */
export const open = (
  kind: Stores.Kind,
  setup: WorldSetup,
  leaseMs: number,
  stats: Stats,
): Effect.Effect<World, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { store, inFlight } = yield* Stores.open(kind)
    const world = yield* make(
      {
        tools: Tools.toolsFor(setup.generation),
        seed: setup.seed,
        deduplicateByKey: setup.dedup,
        ...(setup.generation === undefined ? {} : { generation: setup.generation }),
      },
      {
        durableServer: setup.durableServer,
        setup: { inDoubtPolicy: setup.inDoubtPolicy, leaseMs },
        stats,
        inFlight,
      },
      store,
    )
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const proc of world.procs) proc.stop()
        if (process.env.CHAOS_TRACE === "1") process.stderr.write(`${world.trace.join("\n")}\n`)
      }),
    )
    stats.sequences++
    return world
  })

const make = (
  config: Config.Config,
  options: {
    readonly durableServer: boolean
    readonly setup: ClientSetup
    readonly stats: Stats
    readonly inFlight: Stores.InFlight
  },
  store: HandleStore.HandleStore,
): Effect.Effect<World, never, Scope.Scope> =>
  Effect.gen(function* () {
    const clock = yield* Effect.clockWith((clock) =>
      clock instanceof VirtualClock
        ? Effect.succeed(clock)
        : Effect.dieMessage("run the world on a VirtualClock"),
    )
    const server = yield* FakeServer.make(config, {
      clock: { now: () => clock.unsafeCurrentTimeMillis() },
      // Task ids from a counter: random ids would make anything ordered by id vary between
      // replays of one seed.
      newTaskId: (() => {
        let next = 0
        return () => `00000000-0000-4000-8000-${(++next).toString(16).padStart(12, "0")}`
      })(),
      // Latency faults wait in virtual time.
      sleep: (ms) => clock.sleepPromise(ms),
      notifyEveryMs: 0,
      // Well inside the clients' `idleMs` (see `pushOptions`): only a muted stream falls silent.
      keepAliveMs: 2_000,
      persistence: options.durableServer ? Persistence.memory() : undefined,
    })
    return {
      clock,
      server,
      store,
      setup: options.setup,
      stats: options.stats,
      trace: [],
      proc: undefined,
      procCount: 0,
      procs: [],
      faults: [],
      factWriteFault: false,
      inputWaiters: [],
      autoAnswer: false,
      garbledCreates: new Set(),
      onGc: () => Effect.void,
      lostPollAnswers: new Set(),
      inFlight: options.inFlight,
      delivered: new Map(),
      holds: InstanceHolds.make(),
    }
  })

const brokenBody = () =>
  new Response(
    new ReadableStream<Uint8Array>({
      start: (controller) =>
        controller.error(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" })),
    }),
    { status: 200, headers: { "content-type": "application/json" } },
  )

/** The client's `fetch`: the in-process server behind the armed one-shot faults. */
const serverFetch = (world: World, method: string, request: Request): Promise<Response> => {
  const at = world.faults.findIndex((fault) => fault.method === method)
  const fault = at >= 0 ? world.faults[at] : undefined
  if (fault === undefined) return world.server.handler(request)
  world.faults.splice(at, 1)
  world.stats.serverFaults++
  if (method === "tasks/get" && fault.kind.endsWith("-after")) {
    void request
      .clone()
      .json()
      .then((body: { params?: { taskId?: unknown } }) => {
        const taskId = body.params?.taskId
        if (typeof taskId === "string")
          world.lostPollAnswers.add(`${taskId}@${world.clock.unsafeCurrentTimeMillis()}`)
      })
      .catch(() => {})
  }
  world.trace.push(`  fault ${fault.kind}${fault.ms === undefined ? "" : ` ${fault.ms} ms`} on ${method}`)
  switch (fault.kind) {
    case "502-after":
    case "503-after":
    case "504-after":
    case "504-before":
      return world.server.handler(request, [
        {
          kind: "status",
          status: Number(fault.kind.slice(0, 3)),
          phase: fault.kind.endsWith("after") ? "after" : "before",
        },
      ])
    case "slow":
    case "late":
      return world.server.handler(request, [
        { kind: "latency", ms: fault.ms ?? 0, phase: fault.kind === "late" ? "after" : "before" },
      ])
    case "refused":
      return Promise.reject(
        new TypeError("fetch failed", {
          cause: Object.assign(new Error("refused"), { code: "ECONNREFUSED" }),
        }),
      )
    case "reset-before":
      return Promise.reject(
        new TypeError("fetch failed", { cause: Object.assign(new Error("reset"), { code: "ECONNRESET" }) }),
      )
    case "503":
      return Promise.resolve(new Response("busy", { status: 503, headers: { "retry-after": "1" } }))
    case "429":
      return Promise.resolve(new Response("slow down", { status: 429, headers: { "retry-after": "2" } }))
    case "drop-after":
      return world.server.handler(request).then(async (response) => {
        await response.text().catch(() => "")
        return brokenBody()
      })
    case "500-after":
      return world.server.handler(request).then(async (response) => {
        await response.text().catch(() => "")
        return new Response("gateway error", { status: 500 })
      })
    case "malformed-after":
      return world.server.handler(request).then(async (response) => {
        const text = await response.text().catch(() => "")
        return new Response(text.slice(0, Math.max(1, Math.floor(text.length / 2))), {
          status: 200,
          headers: { "content-type": "application/json" },
        })
      })
    case "wrong-shape-after":
      return world.server.handler(request).then(async (response) => {
        const text = await response.text().catch(() => "")
        let body: unknown
        try {
          body = JSON.parse(text)
        } catch {
          body = text
        }
        if (typeof body === "object" && body !== null && "result" in body) {
          const result = (body as { result: Record<string, unknown> }).result
          if (typeof result === "object" && result !== null) {
            if (method === "tools/call" && typeof result.taskId === "string")
              world.garbledCreates.add(result.taskId)
            result.status = "bogus"
            if (result.resultType === "complete" && !("taskId" in result)) result.resultType = "weird"
          }
        }
        return new Response(JSON.stringify(body), {
          status: response.status,
          headers: { "content-type": "application/json" },
        })
      })
  }
}

/**
 * Runs a `deleteSettledBefore`, telling the world which rows it removed: exactly the terminal
 * rows settled before the cutoff (time stands still while it runs, and terminal rows never change).
 */
const observeGc = (world: World, options: HandleStore.GcOptions, run: Effect.Effect<unknown, unknown>) =>
  Effect.gen(function* () {
    const page = yield* world.store.list({ scope: options.scope ?? "default", limit: 1000 })
    const candidates = page.records.filter(
      (row) =>
        HandleRecord.isTerminal(row.status) &&
        row.settledAt !== null &&
        row.settledAt < options.settledBefore,
    )
    const report = yield* run
    // The world's calls have no consumers: nothing old enough is kept.
    const deleted = (report as Partial<HandleStore.GcReport> | undefined)?.deleted
    yield* world.onGc(candidates, typeof deleted === "number" ? deleted : -1)
    return report
  })

/**
 * Whether a write is of a fact, judged from the row before it: a task id arrives (`TaskCreated`,
 * a late answer), a second task for the key is kept as a stray, or a direct answer settles a
 * call that had no task (an abandon, which is an intent, settles as cancelled).
 */
const isFact = (before: HandleRecord.HandleRecord, after: HandleRecord.HandleRecord) =>
  (before.taskId === null && after.taskId !== null) ||
  after.strayTasks.length > before.strayTasks.length ||
  (after.taskId === null &&
    (before.status === "pending" || before.status === "in_doubt") &&
    HandleRecord.isTerminal(after.status) &&
    after.status !== "cancelled")

/**
 * Runs an `update` while a `factWriteFails` fault is armed: a write of a fact fails instead, once
 * (the first one to get here takes the fault), and is not made.
 */
const failingFact = (
  world: World,
  after: HandleRecord.HandleRecord,
  write: Effect.Effect<unknown, unknown>,
) =>
  Effect.flatMap(Effect.orDie(world.store.get(after.scope, after.key)), (before) => {
    if (!world.factWriteFault || before._tag === "None" || !isFact(before.value, after)) return write
    world.factWriteFault = false
    world.stats.storeFaults++
    world.trace.push(
      `  fault: the store fails a fact write of ${after.key} (${before.value.status} → ${after.status}, task ${after.taskId === null ? "none" : `…${after.taskId.slice(-6)}`})`,
    )
    return Effect.fail(
      new HandleStore.StoreError({
        operation: "update",
        message: "chaos: the store did not take this write",
      }),
    )
  })

/**
 * Starts a client process on the world's store; it becomes the world's current process.
 *
 * @since 0.1.0
 */
export interface ProcessOptions {
  readonly instanceId: string
  readonly background: boolean
  /** The client's `callTimeout`. */
  readonly callTimeoutMs?: number
  /** The wire's request timeout (default the wire's own). */
  readonly requestTimeoutMs?: number
  /** Replaces the world's input handler (which waits for `answer` steps). */
  readonly onInputRequired?: (proc: () => Proc) => TaskClient.InputHandler
  /** Push through `subscriptions/listen` (`pushOptions`); off when absent. */
  readonly push?: TaskClient.PushOptions | undefined
}

/**
 * The clients' push settings in chaos runs: a stream silent for 5 s is taken as half-open (the
 * server sends keep-alives every 2 s), and a dropped one is opened again within 2 s.
 *
 * @since 0.4.0
 */
export const pushOptions: TaskClient.PushOptions = { idleMs: 5_000, maxBackoffMs: 2_000 }

/** @since 0.1.0 */
export const startProcess = (world: World, options: ProcessOptions): Effect.Effect<Proc> =>
  Effect.gen(function* () {
    const id = ++world.procCount
    let dead = false
    let diedAt: number | undefined
    let armed: CrashPoint | undefined
    let count = 0
    const die = (why: string) => {
      if (dead) return
      dead = true
      InstanceHolds.free(world.holds, id)
      diedAt = world.clock.unsafeCurrentTimeMillis()
      world.stats.crashes++
      world.trace.push(`  process ${id} crashed ${why}`)
    }
    const fires = (matches: boolean) => {
      if (!matches || armed === undefined) return false
      count++
      return count === armed.nth
    }

    const store = Stores.wrap(
      world.store,
      (op, operation) =>
        (...args) =>
          Effect.suspend(() => {
            if (dead) return hang
            if (op === "lockInstance") return InstanceHolds.lock(world.holds, id, args[0] as string)
            const direct = operation(...args)
            const run =
              op === "deleteSettledBefore"
                ? observeGc(world, args[0] as HandleStore.GcOptions, direct)
                : op === "update" && world.factWriteFault
                  ? failingFact(world, args[0] as HandleRecord.HandleRecord, direct)
                  : direct
            const point = armed
            if (point?.at === "store" && fires(point.op === op)) {
              if (point.phase === "before-write") {
                die(`before store.${op}`)
                return hang
              }
              // A fault fires only while it is still armed: quiescing disarms every fault, and
              // one armed before must not kill the process the liveness check counts on.
              return run.pipe(
                Effect.zipRight(Effect.sync(() => armed === point && die(`after store.${op}`))),
                Effect.zipRight(hang),
              )
            }
            return run.pipe(Effect.flatMap((value) => (dead ? hang : Effect.succeed(value))))
          }),
    )

    const fetch: typeof globalThis.fetch = async (input, init) => {
      if (dead) return new Promise<Response>(() => {})
      const request = new Request(input, init)
      // The ledger names who sent each request (checks of concurrent polls across instances).
      request.headers.set("x-client-id", `${options.instanceId}#${id}`)
      const method = request.headers.get("mcp-method") ?? ""
      const point = armed
      const matches = point?.at === "fetch" && point.method === method && fires(true)
      if (matches && point?.at === "fetch" && point.phase === "before-send") {
        die(`as ${method} left`)
        return new Promise<Response>(() => {})
      }
      const sentAt = world.clock.unsafeCurrentTimeMillis()
      const response = await serverFetch(world, method, request)
      if (matches && armed === point) die(`after the server answered ${method}`)
      if (dead) return new Promise<Response>(() => {})
      const who = `${options.instanceId}#${id}`
      const label = `${method} ${request.headers.get("mcp-name") ?? ""}`.trim()
      if (init?.signal?.aborted === true) {
        world.trace.push(`  ${who} gave up on ${label} (sent at ${sentAt}) before its answer came`)
        // The client gave up (its timeout) before this late answer came: it is lost.
        if (method === "tasks/get") {
          const taskId = request.headers.get("mcp-name")
          if (taskId !== null) world.lostPollAnswers.add(`${taskId}@${sentAt}`)
        }
        return new Promise<Response>(() => {})
      }
      world.trace.push(`  ${who} ${label}: HTTP ${response.status} (sent at ${sentAt})`)
      if (method === "tools/call") await noteDelivery(world, response.clone(), () => proc)
      return response
    }

    const worldInput: TaskClient.InputHandler = () =>
      Effect.gen(function* () {
        if (world.autoAnswer) return inputAnswer
        const waiter = yield* Deferred.make<Json.JsonValue, string>()
        world.inputWaiters.push(waiter)
        return yield* Deferred.await(waiter)
      })

    const scope = yield* Scope.make()
    const layer = TaskClient.layer({
      servers: [{ name: "fake", url: serverUrl }],
      instanceId: options.instanceId,
      leaseMs: world.setup.leaseMs,
      inDoubtPolicy: world.setup.inDoubtPolicy,
      onInputRequired: options.onInputRequired?.(() => proc) ?? worldInput,
      ...(options.callTimeoutMs === undefined ? {} : { callTimeout: Duration.millis(options.callTimeoutMs) }),
      background: options.background ? { tickMs: 500 } : false,
      // Off unless asked for (the client's own default is on): without it the models check polling.
      push: options.push ?? false,
    }).pipe(
      Layer.provide(
        Layer.mergeAll(
          Layer.succeed(HandleStore.HandleStore, store),
          HttpWire.layer({
            fetch,
            clientCapabilities: { elicitation: {} },
            ...(options.requestTimeoutMs === undefined
              ? {}
              : { requestTimeout: Duration.millis(options.requestTimeoutMs) }),
          }),
          Polling.layer(),
        ),
      ),
    )
    const context = yield* Layer.buildWithScope(layer, scope).pipe(Effect.orDie)
    const proc: Proc = {
      id,
      instanceId: options.instanceId,
      background: options.background,
      client: Context.get(context, TaskClient.TaskClient),
      scope,
      arm: (point) => {
        armed = point
        count = 0
      },
      crash: () => die("on the spot"),
      stop: () => {
        dead = true
        InstanceHolds.free(world.holds, id)
      },
      dead: () => dead,
      diedAt: () => diedAt,
    }
    world.proc = proc
    world.procs.push(proc)
    world.trace.push(`  process ${id} started (${options.instanceId}, background ${options.background})`)
    return proc
  })

/** Notes the task id of a `tools/call` answer that reached a live client, if it carries one. */
const noteDelivery = async (world: World, response: Response, proc: () => Proc): Promise<void> => {
  const text = await response.text().catch(() => "")
  let taskId: unknown
  try {
    taskId = (JSON.parse(text) as { result?: { taskId?: unknown } }).result?.taskId
  } catch {
    // Cut or garbled: nothing the client could have read.
  }
  if (typeof taskId === "string" && !world.delivered.has(taskId))
    world.delivered.set(taskId, { taskId, proc: proc(), at: world.clock.unsafeCurrentTimeMillis() })
}

// Enough turns of the event loop for a request to cross the in-process server and back.
const flushTurns = Number(process.env.CHAOS_FLUSH_TURNS ?? 30)

/**
 * Lets promise-based work run before time moves on: the in-process server, and store operations
 * (the SQLite writer, Postgres round trips), which are waited for in real time (bounded).
 *
 * @since 0.1.0
 */
export const flush = (world: World): Effect.Effect<void> =>
  Effect.gen(function* () {
    for (let round = 0; round < 3; round++) {
      // Open listen streams hear what changed by now (the server's own timer is off: virtual time).
      world.server.notify()
      for (let i = 0; i < flushTurns; i++)
        yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
      if (world.inFlight.count === 0) return
      const started = Date.now()
      while (world.inFlight.count > 0 && Date.now() - started < 5_000)
        yield* Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 0)))
    }
  })

/** Every question open now gets the answer (or the refusal) a human would give. */
const reply = (world: World, answer: boolean): Effect.Effect<void> =>
  Effect.gen(function* () {
    const waiting = world.inputWaiters
    world.inputWaiters = []
    for (const waiter of waiting) {
      if (answer) yield* Deferred.succeed(waiter, inputAnswer)
      else yield* Deferred.fail(waiter, "the user declined")
    }
  })

/**
 * The end of a sequence: faults stop and every open question is answered.
 *
 * @since 0.1.0
 */
export const calm = (world: World): Effect.Effect<void> =>
  Effect.suspend(() => {
    world.faults = []
    world.factWriteFault = false
    return reply(world, true)
  })

/**
 * Steps that act on the world rather than on one client: the same in every model.
 *
 * @since 0.1.0
 */
export type WorldStep =
  | { readonly kind: "answer" }
  | { readonly kind: "refuse" }
  | { readonly kind: "fault"; readonly fault: ServerFault }
  | { readonly kind: "serverRestart" }
  | { readonly kind: "advance"; readonly ms: number }
  /**
   * The server's open `subscriptions/listen` streams are cut (`drop`), or go half-open (`mute`:
   * open, and nothing more is sent on them, keep-alives included).
   */
  | { readonly kind: "streams"; readonly what: "drop" | "mute" }
  /**
   * The next store write of a fact (a task id, a direct result, a late answer: what only the
   * server's answer says), by whichever process makes it, fails once with a StoreError; the
   * process lives on. The id it carries must still reach the row (issue 28, finding 1).
   */
  | { readonly kind: "factWriteFails" }

const worldStepKinds: ReadonlySet<string> = new Set([
  "answer",
  "refuse",
  "fault",
  "serverRestart",
  "advance",
  "streams",
  "factWriteFails",
])

/** @since 0.1.0 */
export const isWorldStep = (step: { readonly kind: string }): step is WorldStep =>
  worldStepKinds.has(step.kind)

/** @since 0.1.0 */
export const runWorldStep = (world: World, step: WorldStep): Effect.Effect<void> =>
  Effect.gen(function* () {
    switch (step.kind) {
      case "answer":
      case "refuse":
        return yield* reply(world, step.kind === "answer")
      case "fault":
        world.faults.push(step.fault)
        return
      case "serverRestart":
        world.stats.serverRestarts++
        world.server.restart()
        return
      case "advance":
        return yield* elapse(world, step.ms)
      case "streams":
        world.stats.serverFaults++
        if (step.what === "drop") world.server.dropStreams()
        else world.server.muteStreams()
        return
      case "factWriteFails":
        world.factWriteFault = true
        return
    }
  })

/**
 * Moves virtual time forward, waking sleepers in order and letting their I/O finish.
 *
 * @since 0.1.0
 */
export const elapse = (world: World, ms: number): Effect.Effect<void> =>
  Effect.zipRight(flush(world), world.clock.advance(ms, flush(world)))

/**
 * Runs `effect` while moving virtual time; None when it did not finish within `limitMs`.
 *
 * @since 0.1.0
 */
export const runFor = <A, E>(world: World, effect: Effect.Effect<A, E>, limitMs: number, stepMs = 250) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.fork(effect)
    yield* flush(world)
    for (let elapsed = 0; ; elapsed += stepMs) {
      const done = yield* Fiber.poll(fiber)
      if (done._tag === "Some") return Exit.isSuccess(done.value) ? ("done" as const) : ("failed" as const)
      if (elapsed >= limitMs) {
        yield* Fiber.interruptFork(fiber)
        return "timeout" as const
      }
      yield* world.clock.advance(stepMs, flush(world))
    }
  })

/**
 * Runs a sequence's steps in order, each traced, the world's own steps by the world and the
 * others by `act`; after each, lets its I/O finish and checks every invariant.
 *
 * @since 0.1.0
 */
export const runSteps = <Step extends { readonly kind: string }>(
  world: World,
  steps: ReadonlyArray<Step>,
  describe: (step: Step) => string,
  act: (step: Exclude<Step, WorldStep>) => Effect.Effect<void>,
  check: (when: string) => Effect.Effect<void>,
): Effect.Effect<void> =>
  Effect.forEach(
    steps,
    (step, index) =>
      Effect.gen(function* () {
        world.trace.push(`#${index} ${describe(step)}`)
        if (isWorldStep(step)) yield* runWorldStep(world, step)
        else yield* act(step as Exclude<Step, WorldStep>)
        yield* flush(world)
        world.stats.steps++
        yield* check(`after step #${index} (${describe(step)})`)
      }),
    { discard: true },
  )

/**
 * Lets `seconds` of quiet time pass, twenty at a time, checking every invariant after each;
 * `between` runs after each check (a supervisor restarting what died).
 *
 * @since 0.1.0
 */
export const quiet = (
  world: World,
  seconds: number,
  /** How the checks name the period: `while quiet`. */
  label: string,
  check: (when: string) => Effect.Effect<void>,
  between: Effect.Effect<void> = Effect.void,
): Effect.Effect<void> =>
  Effect.gen(function* () {
    for (let second = 0; second < seconds; second += 20) {
      yield* elapse(world, 20_000)
      yield* check(`${label} at +${second + 20} s`)
      yield* between
    }
  })

/**
 * Dies with an InvariantViolation that ends with the last `lines` of this world's trace.
 *
 * @since 0.1.0
 */
export const fail = (world: World, lines: number) => (message: string) =>
  violated(world.trace, lines, message)
