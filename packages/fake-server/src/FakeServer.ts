/**
 * A stateless MCP 2026-07-28 Tasks server that misbehaves on purpose, deterministically, and
 * records everything it launched in its ledger. Its handler is web-standard
 * (`(Request) => Promise<Response>`): mount it in any server, call it as `fetch`, or route msw to it
 * (`MswHandlers`).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { Config, Fault } from "./Config.js"
import { makeServer, optionDefaults } from "./internal/server.js"
import type * as Ledger from "./Ledger.js"
import type { Persistence } from "./Persistence.js"
import type { ServerClock } from "./ServerClock.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Source of time for durations, expiry and timestamps (default `Date.now`). */
  readonly clock?: ServerClock | undefined
  /**
   * How held direct answers and `latency` faults wait (default: the clock's own `sleep` when it
   * has one, as `ServerClock.manual` does, else a real timer); pass one bound to a virtual clock
   * in tests.
   */
  readonly sleep?: ((ms: number) => Promise<void>) | undefined
  /** Keep tasks across `restart()` (and across processes, with `Persistence.jsonFile`). */
  readonly persistence?: Persistence | undefined
  /**
   * How `handler` shows a dropped connection: `error-body` (default) answers 200 with a body
   * stream that errors, as a real cut connection looks to `fetch`; `throw` rejects with
   * `ConnectionDropped`.
   */
  readonly dropStyle?: "error-body" | "throw" | undefined
  /**
   * Real-time interval at which open `subscriptions/listen` streams are re-checked for changes
   * (default 100 ms; 0 disables the timer: call `notify()` after moving a virtual clock).
   */
  readonly notifyEveryMs?: number | undefined
  /**
   * An open `subscriptions/listen` stream with nothing to say for this long (server clock) gets a
   * keep-alive comment at its next check, so that a client can tell a quiet stream from a
   * half-open one (default 15 000 ms; 0: never).
   */
  readonly keepAliveMs?: number | undefined
  /** Task id generator (default `crypto.randomUUID`: unguessable, as the spec asks). */
  readonly newTaskId?: (() => string) | undefined
}

/**
 * The options a server is built with when none are given.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaults: {
  readonly dropStyle: "error-body"
  readonly notifyEveryMs: number
  readonly keepAliveMs: number
} = optionDefaults

/**
 * The outcome of serving one HTTP request: a response, or a connection cut before any byte.
 *
 * @since 0.1.0
 * @category models
 */
export type ServeResult =
  | { readonly kind: "response"; readonly response: Response }
  | { readonly kind: "drop" }

/**
 * @since 0.1.0
 * @category models
 */
export interface FakeServer {
  /**
   * Web-standard handler: mount it in any server, or call it as `fetch`. `faults` apply to this
   * request on top of the configured schedule (a test that decides its faults as it goes).
   */
  readonly handler: (request: Request, faults?: readonly Fault[]) => Promise<Response>
  /** Like `handler`, but reports a dropped connection as data (for adapters that can cut sockets). */
  readonly serve: (request: Request, faults?: readonly Fault[]) => Promise<ServeResult>
  readonly ledger: Ledger.Ledger
  readonly config: Config
  /** Simulate a process restart: in-memory tasks are lost unless persistence keeps them. */
  restart(): Ledger.Restart
  /** Push pending `notifications/tasks` to open listen streams now. */
  notify(): void
  /** Ids of the tasks the server currently holds. */
  taskIds(): readonly string[]
  /** Close listen streams and timers. */
  close(): void
  /** How many listen streams are open now. */
  openStreams(): number
  /** Cut every open listen stream (the client sees a dropped connection); new ones may open. */
  dropStreams(): void
  /** Every open listen stream stays open and sends nothing more, keep-alives included (half-open). */
  muteStreams(): void
}

/**
 * @since 0.2.0
 * @category tags
 */
export const FakeServer: Context.Tag<FakeServer, FakeServer> = Context.GenericTag<FakeServer>(
  "@mcp-handles/fake-server/FakeServer",
)

/**
 * The connection was cut: `handler` rejects with it (`dropStyle: "throw"`), or errors the
 * response body with it.
 *
 * @since 0.1.0
 * @category errors
 */
export class ConnectionDropped extends Schema.TaggedError<ConnectionDropped>()("ConnectionDropped", {}) {
  override get message(): string {
    return "fake-server: connection dropped"
  }
}

/**
 * Builds a server at once, outside Effect: what promise-based tests and the binary use. Call
 * `close()` when done (or build it with `make` in a scope).
 *
 * @since 0.2.0
 * @category constructors
 */
export const unsafeMake = (config: Config, options: Options = {}): FakeServer =>
  makeServer(config, options, () => new ConnectionDropped())

/**
 * Builds a server that is closed when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (config: Config, options: Options = {}): Effect.Effect<FakeServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => unsafeMake(config, options)),
    (server) => Effect.sync(() => server.close()),
  )

/**
 * @since 0.2.0
 * @category layers
 */
export const layer = (config: Config, options: Options = {}): Layer.Layer<FakeServer> =>
  Layer.scoped(FakeServer, make(config, options))
