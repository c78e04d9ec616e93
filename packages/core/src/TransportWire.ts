/**
 * The wire over any SDK `Transport` that keeps a connection (stdio above all): the same six
 * requests, envelope, decoding and classification as `HttpWire`, with answers correlated by
 * JSON-RPC id. The caller supplies the transport factory, so core never imports the SDK's stdio
 * entry (nor `node:*`):
 *
 * ```ts
 * import { StdioClientTransport } from "@modelcontextprotocol/client/stdio"
 * TransportWire.layer({ transport: () => new StdioClientTransport({ command: "my-server" }) })
 * ```
 *
 * One connection is opened on first use and reopened after it closes (a crashed server process
 * is restarted by the next request). `ServerEndpoint.url` and `headers` do not apply: the
 * transport is the endpoint.
 *
 * Classification: the transport failed to start → `NotSent`; `send` rejected, the connection
 * closed before the answer, or no answer within `requestTimeout` → `NoAnswer`; a JSON-RPC error →
 * `RpcErrorAnswer`; an answer that is not plain JSON, too large, or of the wrong shape →
 * `MalformedAnswer`. The transport parses messages itself, so keys its parser drops (such as
 * `__proto__`) cannot be seen here; the HTTP wire, which reads raw text, refuses them.
 *
 * @since 0.1.0
 */
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Adapter from "./internal/wire/adapter.js"
import { classifyMessage } from "./internal/wire/classify.js"
import { fromRpc, type Rpc } from "./internal/wire/methods.js"
import { type AdapterOptions, NoAnswer, NotSent, Wire } from "./Wire.js"

/**
 * Options of the transport wire: those of every adapter (timeout, answer size, client info and
 * capabilities; defaults in `Wire.defaults`; answers are measured serialised), and the
 * transport factory.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options extends AdapterOptions {
  /** Creates an unstarted transport; called again after the previous one closed. */
  readonly transport: () => Transport
}

/** What became of one request on the connection. */
type Delivery =
  | { readonly _tag: "NotStarted"; readonly error: unknown }
  | { readonly _tag: "SendFailed"; readonly error: unknown }
  | { readonly _tag: "Closed" }
  | { readonly _tag: "Message"; readonly message: unknown }

interface Connection {
  readonly transport: Transport
  readonly pending: Map<number, (delivery: Delivery) => void>
  ready: Promise<void>
  closed: boolean
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<Wire, never, Scope.Scope> =>
  Effect.gen(function* () {
    const adapter = Adapter.make(options)
    let connection: Connection | undefined

    const drop = (current: Connection) => {
      current.closed = true
      if (connection === current) connection = undefined
      for (const resolve of current.pending.values()) resolve({ _tag: "Closed" })
      current.pending.clear()
    }

    const connect = (): Connection => {
      if (connection !== undefined) return connection
      const transport = options.transport()
      const pending = new Map<number, (delivery: Delivery) => void>()
      const current: Connection = { transport, pending, ready: Promise.resolve(), closed: false }
      transport.onmessage = (message) => {
        if (!("id" in message) || typeof message.id !== "number") return
        if (!("result" in message || "error" in message)) return
        const resolve = pending.get(message.id)
        if (resolve === undefined) return
        pending.delete(message.id)
        resolve({ _tag: "Message", message })
      }
      transport.onclose = () => drop(current)
      // Parse failures and the like surface as a missing answer (timeout); nothing to log here.
      transport.onerror = () => {}
      current.ready = transport.start().catch((error: unknown) => {
        drop(current)
        throw error
      })
      current.ready.catch(() => {})
      connection = current
      return current
    }

    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        const current = connection
        connection = undefined
        if (current !== undefined) await current.transport.close().catch(() => {})
      }),
    )

    const rpc: Rpc = (_server, method, params, extraMeta) =>
      Effect.gen(function* () {
        const message = adapter.request(method, params, extraMeta)
        const id = message.id
        let sent = false
        const delivered = yield* Effect.promise(
          (signal) =>
            new Promise<Delivery>((resolve) => {
              let current: Connection
              try {
                current = connect()
              } catch (error) {
                return resolve({ _tag: "NotStarted", error })
              }
              signal.addEventListener("abort", () => current.pending.delete(id), { once: true })
              current.ready.then(
                () => {
                  if (current.closed || signal.aborted) {
                    return resolve({ _tag: "NotStarted", error: "the connection closed before sending" })
                  }
                  current.pending.set(id, resolve)
                  sent = true
                  current.transport.send(message as unknown as JSONRPCMessage).catch((error: unknown) => {
                    current.pending.delete(id)
                    resolve({ _tag: "SendFailed", error })
                  })
                },
                (error: unknown) => resolve({ _tag: "NotStarted", error }),
              )
            }),
        ).pipe(Effect.timeoutOption(adapter.timeout))
        if (Option.isNone(delivered)) return yield* adapter.timedOut(method, sent)
        const result = delivered.value
        switch (result._tag) {
          case "NotStarted":
            return yield* new NotSent({ method, reason: `transport did not start: ${String(result.error)}` })
          case "SendFailed":
            return yield* new NoAnswer({ method, reason: `send failed: ${String(result.error)}` })
          case "Closed":
            return yield* new NoAnswer({ method, reason: "the connection closed before the answer" })
          case "Message":
            return yield* classifyMessage(result.message, { method, id, now: 0, limits: adapter.limits })
        }
      })

    return fromRpc(rpc, options)
  })

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Wire> => Layer.scoped(Wire, make(options))
