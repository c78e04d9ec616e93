/**
 * How a client is opened: the servers, the store, and the engine's settings. Every field but
 * `servers` is optional; `undefined` means the default.
 *
 * @since 0.1.0
 */
import type { DurationInput } from "./DurationInput.js"
import type { JsonInput, JsonLimits, JsonObject } from "./Json.js"
import type { ServerRequest } from "./ServerRequest.js"
import type { Store } from "./Store.js"

/**
 * A server calls may go to, by name.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerEndpoint {
  /** The name rows refer to; part of the server's identity. */
  readonly name: string
  readonly url: string
  /** Headers for every request to it (read again for each request: tokens may rotate). */
  readonly headers?: (() => Readonly<Record<string, string>>) | undefined
}

/**
 * One request for input from the server, surfaced once per key.
 *
 * @since 0.1.0
 * @category models
 */
export interface InputRequest {
  readonly scope: string
  readonly key: string
  readonly tool: string
  /** The server's key for this request, unique over the task's life. */
  readonly inputKey: string
  /** What the server asks (an elicitation form or URL, sampling, roots, or `unknown`): narrow on `method`. */
  readonly request: ServerRequest
}

/**
 * Where the encryption keys come from: an environment variable, a file (read once when the
 * client opens; keep it 0600), or an async callback (a KMS).
 *
 * @since 0.5.0
 * @category models
 */
export type EncryptionKeys =
  | { readonly keyEnv: string }
  | { readonly keyFile: string }
  | {
      readonly keys: () => Promise<{
        readonly current: string
        readonly keys: ReadonlyMap<string, Uint8Array>
      }>
    }

/**
 * @since 0.1.0
 * @category models
 */
export interface OpenOptions {
  readonly servers: ReadonlyArray<ServerEndpoint>
  /** Where calls live. Default `{ kind: "sqlite" }`: `./.mcp-handles/tasks.db`. */
  readonly store?: Store | undefined
  /**
   * Encryption at rest (off when absent): task ids, arguments, results, input requests and
   * answers are sealed in the store with AES-256-GCM. The keys are `id:base64` entries, newest
   * (current) first, separated by commas or newlines; each key is 32 random bytes.
   */
  readonly encryption?: EncryptionKeys | undefined
  /**
   * Answers input requests; its answer is checked against the request and stored before it is
   * sent, never asked for twice. Without one, a wait on a call that asks for input rejects with
   * `InputRequired` (answer it with `answer`).
   */
  readonly onInputRequired?: ((request: InputRequest) => Promise<JsonInput>) | undefined
  /** How long one input handler may take; past it the question is asked again later. Default 10 minutes. */
  readonly inputTimeout?: DurationInput | undefined
  /** Give up waiting for a `tools/call` answer after this long and mark the call in doubt. */
  readonly callTimeout?: DurationInput | undefined
  /**
   * This process's name on the store. A restart under the same id resumes its calls at once;
   * processes sharing a store need distinct ids, stable across restarts. Default `local`.
   */
  readonly instanceId?: string | undefined
  /** Scope used when a call names none. Default `default`. */
  readonly defaultScope?: string | undefined
  /** How long a lease lasts past a row's next poll, in milliseconds. Default 30 000. */
  readonly leaseMs?: number | undefined
  /**
   * A call that may or may not have launched: `surface` (default) leaves it to you;
   * `reissue-if-idempotent` re-sends it when the tool declares `idempotentHint: true`.
   */
  readonly inDoubtPolicy?: "surface" | "reissue-if-idempotent" | undefined
  /** `hash` keeps only a hash of the arguments (they may hold secrets). Default `full`. */
  readonly storeArguments?: "full" | "hash" | undefined
  /** Ask servers for progress of direct calls and keep its material changes. Default true. */
  readonly progress?: boolean | undefined
  readonly argumentLimits?: JsonLimits | undefined
  readonly resultLimits?: JsonLimits | undefined
  /** The background reconciler, which drives calls nobody waits on; `false` turns it off. */
  readonly background?: false | BackgroundOptions | undefined
  /** Hold `instanceId` on the store while open (default); `false` only for a client that never drives a call. */
  readonly claimInstance?: boolean | undefined
  /** Record each server (name, URL without credentials) in the store, for the CLI. Default on. */
  readonly recordServers?: boolean | undefined
  /** Task status pushed over `subscriptions/listen` where the server offers it. Default on. */
  readonly push?: boolean | PushOptions | undefined
  readonly polling?: Partial<PollingOptions> | undefined
  readonly http?: HttpOptions | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface BackgroundOptions {
  readonly tickMs?: number | undefined
  readonly batchSize?: number | undefined
  readonly concurrency?: number | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface PushOptions {
  readonly safetyNetMs?: number | undefined
  /** At most this many safety-net polls a second over all covered tasks (default 400). */
  readonly safetyNetPerSecond?: number | undefined
  readonly batchMs?: number | undefined
  /** Tasks one stream carries at most; more are spread over more streams (default 1,000). */
  readonly tasksPerStream?: number | undefined
  readonly backoffMs?: number | undefined
  readonly maxBackoffMs?: number | undefined
  readonly idleMs?: number | undefined
}

/**
 * When to poll next and how long to back off; server intervals are clamped into
 * [`minIntervalMs`, `maxIntervalMs`].
 *
 * @since 0.1.0
 * @category models
 */
export interface PollingOptions {
  readonly minIntervalMs: number
  readonly maxIntervalMs: number
  readonly defaultInitialMs: number
  readonly defaultFactor: number
  readonly defaultMaxMs: number
  readonly retryInitialMs: number
  readonly retryFactor: number
  readonly retryMaxMs: number
  readonly maxDispatchAttempts: number
  readonly stuckAfterMs: number
}

/**
 * The HTTP wire (Streamable HTTP).
 *
 * @since 0.1.0
 * @category models
 */
export interface HttpOptions {
  /** Per-request timeout; a `tools/call` that times out is in doubt. Default 30 s. */
  readonly requestTimeout?: DurationInput | undefined
  /** Answers larger than this (UTF-8 bytes) are refused. Default 16 MiB. */
  readonly maxAnswerBytes?: number | undefined
  readonly clientInfo?: { readonly name: string; readonly version: string } | undefined
  /** Client capabilities declared besides the Tasks extension. */
  readonly clientCapabilities?: JsonObject | undefined
  /** The protocol versions to speak, most preferred first. */
  readonly protocolVersions?: ReadonlyArray<string> | undefined
  /** The fetch to use. Default `globalThis.fetch`. */
  readonly fetch?: typeof globalThis.fetch | undefined
  /**
   * Sends the requests whose answer is read whole (`tasks/get`, `tools/call`, ...). Default:
   * `nodeRequest()` (keep-alive `node:http`), unless a `fetch` is given, which then sends them.
   */
  readonly request?: HttpRequest | undefined
}

/**
 * An answer's headers, by lower-case name (a fetch `Headers` is one).
 *
 * @since 0.6.0
 * @category models
 */
export interface HeaderLookup {
  readonly get: (name: string) => string | null
}

/**
 * One request of the wire: a POST of `body` to `url` with exactly `headers`, reading at most
 * `maxBytes` of the answer.
 *
 * @since 0.6.0
 * @category models
 */
export interface HttpRequestInput {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly maxBytes: number
}

/**
 * What became of a request: no response (`Failed`, the error with its `code`); a response read
 * whole (`Answered`: `text`, or the first MiB of one over the limit, or the error that cut it);
 * or a redirect or 2xx event stream passed on unread (`Passed`).
 *
 * @since 0.6.0
 * @category models
 */
export type HttpRequestOutcome =
  | { readonly _tag: "Failed"; readonly error: unknown }
  | {
      readonly _tag: "Answered"
      readonly status: number
      readonly headers: HeaderLookup
      readonly text?: string | undefined
      readonly oversizePrefix?: string | undefined
      readonly bodyError?: unknown
    }
  | { readonly _tag: "Passed"; readonly response: Response }

/**
 * Sends a request, calls `done` once with what became of it, and returns what aborts it.
 *
 * @since 0.6.0
 * @category models
 */
export type HttpRequest = (input: HttpRequestInput, done: (outcome: HttpRequestOutcome) => void) => () => void
