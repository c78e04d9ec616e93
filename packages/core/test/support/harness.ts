/**
 * Test harness: the fake server in process, driven by the TestClock, and client "processes"
 * that share one store and can crash. A crash drops all in-process state (fibers, caches) and
 * keeps only the store: from the crash on, the dead process's store and network calls never
 * complete, exactly as if it had been killed.
 */

import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as HttpWire from "@mcp-handles/core/HttpWire"
import type * as Outcome from "@mcp-handles/core/Outcome"
import * as Polling from "@mcp-handles/core/Polling"
import * as TaskClient from "@mcp-handles/core/TaskClient"
import type * as Config from "@mcp-handles/fake-server/Config"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import { MemoryStore } from "@mcp-handles/store-memory"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import * as Stores from "./stores.js"

export const serverUrl = "http://fake.test/mcp"

export interface Harness {
  readonly server: FakeServer.FakeServer
  readonly store: HandleStore.HandleStore
}

/**
 * The servers of the tests running now: each pushes what changed after every clock step (clients
 * listen by default). A server leaves when the test that made it ends.
 */
const pushing = new Set<FakeServer.FakeServer>()

/** Suspends until interrupted, holding no timer (`Effect.never` keeps an interval alive). */
const hang: Effect.Effect<never> = Effect.async<never>(() => {})

export const makeHarness = (config: Config.Config): Effect.Effect<Harness> =>
  Effect.gen(function* () {
    const clock = yield* Effect.clock
    const server = FakeServer.unsafeMake(config, {
      clock: { now: () => clock.unsafeCurrentTimeMillis() },
      // Latency faults wait on the TestClock too.
      sleep: (ms) => Effect.runPromise(Effect.sleep(Duration.millis(ms)).pipe(Effect.withClock(clock))),
      // Its own timer would push on real time, whenever the machine gets to it: instead it looks
      // for changes to push after every clock step (`flush`), until the test that made it ends.
      notifyEveryMs: 0,
    })
    pushing.add(server)
    yield* Effect.fork(
      Effect.ensuring(
        hang,
        Effect.sync(() => pushing.delete(server)),
      ),
    )
    const store = yield* MemoryStore.make
    return { server, store }
  })

/** Where a process dies. Each names the last thing that happened before the kill. */
export type CrashPoint =
  | {
      readonly at: "fetch"
      readonly method: string
      readonly nth?: number
      readonly phase: "before-send" | "after-answer"
    }
  | {
      readonly at: "store"
      readonly op: keyof HandleStore.HandleStore
      readonly nth?: number
      readonly phase: "before-write" | "after-write"
    }

export interface Process {
  readonly client: TaskClient.TaskClient
  readonly crash: () => void
  readonly crashed: () => boolean
  /** Done when a crashed process's instance id is free again (at once on memory). */
  readonly freed: Effect.Effect<void>
  readonly close: Effect.Effect<void>
}

const never = Effect.never

export const startProcess = (
  harness: Harness,
  options: Partial<TaskClient.Options> = {},
  crashAt?: CrashPoint,
): Effect.Effect<Process> =>
  Effect.gen(function* () {
    let dead = false
    let freed: Effect.Effect<void> = Effect.void
    // The instance id this process holds lives in a scope of its own: a crash frees it at once,
    // as the OS frees a killed process's locks, so the next process can take the id over.
    const locks = yield* Scope.make()
    const die = () => {
      dead = true
      // Forked: a store on real I/O lets go of its lock asynchronously.
      const release = Effect.runFork(Scope.close(locks, Exit.void))
      freed = Effect.asVoid(Fiber.await(release))
    }
    const counts = new Map<string, number>()
    const hits = (name: string, nth = 1) => {
      const n = (counts.get(name) ?? 0) + 1
      counts.set(name, n)
      return n === nth
    }
    const guard = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
      Effect.suspend(() => (dead ? never : effect))

    const store = Object.fromEntries(
      Object.entries(harness.store).map(([op, fn]) => [
        op,
        // `now` is the store's clock, not an operation: passed through as it is. An operation
        // that is an Effect (`listServers`) never answers a dead process either.
        typeof fn !== "function"
          ? op === "now" || !Effect.isEffect(fn)
            ? fn
            : guard(fn as Effect.Effect<unknown, unknown>)
          : (...args: Array<unknown>) =>
              guard(
                Effect.suspend(() => {
                  const matches = crashAt?.at === "store" && crashAt.op === op
                  if (matches && hits(`store:${op}`, crashAt.nth)) {
                    if (crashAt.phase === "before-write") {
                      die()
                      return never
                    }
                    return (fn as (...a: Array<unknown>) => Effect.Effect<unknown, unknown>)(...args).pipe(
                      Effect.zipRight(Effect.sync(die)),
                      Effect.zipRight(never),
                    )
                  }
                  return (fn as (...a: Array<unknown>) => Effect.Effect<unknown, unknown>)(...args).pipe(
                    Effect.flatMap((value) => (dead ? never : Effect.succeed(value))),
                  )
                }),
              ),
      ]),
    ) as unknown as HandleStore.HandleStore
    const lockInstance: HandleStore.HandleStore["lockInstance"] = (instanceId) =>
      guard(Scope.extend(harness.store.lockInstance(instanceId), locks))
    const processStore: HandleStore.HandleStore = { ...store, lockInstance }

    const fetch: typeof globalThis.fetch = async (input, init) => {
      if (dead) return new Promise<Response>(() => {})
      const request = new Request(input, init)
      const method = request.headers.get("mcp-method") ?? ""
      const matches = crashAt?.at === "fetch" && crashAt.method === method
      if (matches && crashAt.phase === "before-send" && hits(`fetch:${method}`, crashAt.nth)) {
        die()
        return new Promise<Response>(() => {})
      }
      const response = await harness.server.handler(request)
      if (matches && crashAt.phase === "after-answer" && hits(`fetch:${method}`, crashAt.nth)) die()
      if (dead) return new Promise<Response>(() => {})
      return response
    }

    const scope = yield* Scope.make()
    const layer = TaskClient.layer({ servers: [{ name: "fake", url: serverUrl }], ...options }).pipe(
      Layer.provide(
        Layer.mergeAll(
          Layer.succeed(HandleStore.HandleStore, processStore),
          HttpWire.layer({ fetch, clientCapabilities: { elicitation: {} } }),
          Polling.layer(),
        ),
      ),
    )
    const context = yield* Layer.buildWithScope(layer, scope).pipe(Effect.orDie)
    return {
      client: Context.get(context, TaskClient.TaskClient),
      crash: die,
      crashed: () => dead,
      freed: Effect.suspend(() => freed),
      close: Effect.zipRight(Scope.close(scope, Exit.void), Scope.close(locks, Exit.void)),
    }
  })

/** A fake server task that works for 5 s and asks to be polled every second, with `over`. */
export const slowTool = (over: Partial<Config.Config["tools"][number]> = {}) => ({
  name: "slow",
  shape: "task" as const,
  durationMs: 5_000,
  pollIntervalMs: 1_000,
  ...over,
})

/** What `runFor` and `elapse` do after each clock step by default: nothing more. */
const noStep = (): void => {}

const turn = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

/**
 * Lets promise-based work (the in-process server behind fetch) run between clock steps; the
 * servers push what changed first. Store operations on real I/O (`support/stores.ts`) are waited
 * for too, for at most a few seconds of real time each round.
 */
export const flush = Effect.gen(function* () {
  for (let round = 0; round < 3; round++) {
    for (const server of pushing) server.notify()
    yield* Effect.repeatN(turn, 3)
    if (Stores.inFlight.count === 0) return
    const started = Date.now()
    while (Stores.inFlight.count > 0 && Date.now() - started < 5_000)
      yield* Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 0)))
  }
})

/**
 * Runs `effect` to completion while moving the TestClock forward in `stepMs` steps, up to
 * `limitMs` of virtual time. Fails the test when it does not finish in that time.
 */
export const runFor = <A, E>(effect: Effect.Effect<A, E>, limitMs: number, stepMs = 50, onStep = noStep) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.fork(effect)
    yield* flush
    for (let elapsed = 0; elapsed <= limitMs; elapsed += stepMs) {
      const done = yield* Fiber.poll(fiber)
      if (done._tag === "Some") return yield* Fiber.join(fiber)
      yield* TestClock.adjust(Duration.millis(stepMs))
      onStep()
      yield* flush
    }
    return yield* Effect.dieMessage(`did not finish within ${limitMs} ms of virtual time`)
  })

/** Moves virtual time forward, letting the in-process server answer along the way. */
export const elapse = (ms: number, stepMs = 50, onStep = noStep) =>
  Effect.gen(function* () {
    for (let elapsed = 0; elapsed < ms; elapsed += stepMs) {
      yield* TestClock.adjust(Duration.millis(Math.min(stepMs, ms - elapsed)))
      onStep()
      yield* flush
    }
  })

export type { Outcome }

/**
 * A view of the harness whose server answers pass through `rewrite` first: a server that
 * misbehaves in ways the fake server's faults cannot express. `rewrite` gets the JSON-RPC method,
 * the parsed request body and the parsed answer, and returns the answer to send (or undefined to
 * send it unchanged). Non-JSON answers pass through untouched.
 */
export const rewriteAnswers = (
  harness: Harness,
  rewrite: (method: string, request: unknown, answer: unknown) => unknown,
): Harness => ({
  ...harness,
  server: {
    ...harness.server,
    handler: async (request) => {
      const method = request.headers.get("mcp-method") ?? ""
      const body: unknown = await request
        .clone()
        .json()
        .catch(() => undefined)
      const response = await harness.server.handler(request)
      if (!(response.headers.get("content-type") ?? "").startsWith("application/json")) return response
      let text: string
      let answer: unknown
      try {
        text = await response.clone().text()
        answer = JSON.parse(text)
      } catch {
        // A cut connection or a body that is not JSON: passed on as the server sent it.
        return response
      }
      const rewritten = rewrite(method, body, answer)
      return new Response(rewritten === undefined ? text : JSON.stringify(rewritten), {
        status: response.status,
        headers: response.headers,
      })
    },
  },
})

/** A view of the harness whose store is `store` (a wrapper over `harness.store`). */
export const withStore = (harness: Harness, store: HandleStore.HandleStore): Harness => ({
  ...harness,
  store,
})
