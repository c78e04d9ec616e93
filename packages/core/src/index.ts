/**
 * Durable client-side handles for MCP Tasks: every module of `@mcp-handles/core`.
 *
 * @since 0.1.0
 */

/**
 * What the agent-framework adapters share: the tool output, one call's launch and wait, the
 * companion tools of handle mode.
 *
 * @since 0.6.0
 * @category modules
 */
export * as AgentTool from "./AgentTool.js"
/**
 * The calls part of the store port: rows, compare-and-set, claims, leases, pages.
 *
 * @since 0.4.0
 * @category modules
 */
export * as CallStore from "./CallStore.js"
/**
 * The calls part of the driver port, and the rules every store shares for it.
 *
 * @since 0.4.0
 * @category modules
 */
export * as CallStoreDriver from "./CallStoreDriver.js"
/**
 * The AES-256-GCM and HMAC-SHA-256 primitives under `Encryption`, as a port: WebCrypto by
 * default, a faster backend where the runtime has one.
 *
 * @since 0.6.0
 * @category modules
 */
export * as Cipher from "./Cipher.js"
/**
 * The claim, spread and owner-release rules of the store contract, read in memory.
 *
 * @since 0.2.0
 * @category modules
 */
export * as Claiming from "./Claiming.js"
/**
 * Durations as people write them (`"7d"`, `"30s"`), one parser for the library and the CLI.
 *
 * @since 0.2.0
 * @category modules
 */
export * as DurationInput from "./DurationInput.js"
/**
 * Encryption at rest for any store: seals a row's secrets before each write, opens them after
 * each read.
 *
 * @since 0.5.0
 * @category modules
 */
export * as EncryptedStore from "./EncryptedStore.js"
/**
 * Keys (`KeyProvider`), AES-GCM envelopes and the task-id blind index, on a `Cipher`.
 *
 * @since 0.5.0
 * @category modules
 */
export * as Encryption from "./Encryption.js"
/**
 * The durable record of one tool call, and its statuses.
 *
 * @since 0.1.0
 * @category modules
 */
export * as HandleRecord from "./HandleRecord.js"
/**
 * The storage port: what the engine asks of a store, and how a store may fail.
 *
 * @since 0.1.0
 * @category modules
 */
export * as HandleStore from "./HandleStore.js"
/**
 * The thin driver port a store adapter implements, and the store built on it.
 *
 * @since 0.2.0
 * @category modules
 */
export * as HandleStoreDriver from "./HandleStoreDriver.js"
/**
 * The wire over Streamable HTTP.
 *
 * @since 0.1.0
 * @category modules
 */
export * as HttpWire from "./HttpWire.js"
/**
 * One client per instance id in a process: the in-process half of a store's instance lock.
 *
 * @since 0.2.0
 * @category modules
 */
export * as InstanceHold from "./InstanceHold.js"
/**
 * JSON values as they cross a boundary: schemas, limits, validation, hashing.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Json from "./Json.js"
/**
 * The outbox part of the store port: outcomes handed to consumers, acknowledgements, GC.
 *
 * @since 0.4.0
 * @category modules
 */
export * as OutboxStore from "./OutboxStore.js"
/**
 * The outbox part of the driver port, and its rules read in memory.
 *
 * @since 0.4.0
 * @category modules
 */
export * as OutboxStoreDriver from "./OutboxStoreDriver.js"
/**
 * How a call ended, or why it rests.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Outcome from "./Outcome.js"
/**
 * When to poll next and how long to back off, per task.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Polling from "./Polling.js"
/**
 * The client behind plain Promises, for code that does not use Effect.
 *
 * @since 0.2.0
 * @category modules
 */
export * as PromiseClient from "./PromiseClient.js"
export {
  /**
   * Opens a Promise client (see `PromiseClient`).
   *
   * @since 0.1.0
   * @category constructors
   */
  openTaskClient,
} from "./PromiseClient.js"
/**
 * Task ids shortened for logs and displays.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Redaction from "./Redaction.js"
/**
 * The stable identity rows give their server.
 *
 * @since 0.1.0
 * @category modules
 */
export * as ServerIdentity from "./ServerIdentity.js"
/**
 * What a server asks while a call waits for input (elicitation, sampling, roots), and whether
 * an answer fits it.
 *
 * @since 0.4.0
 * @category modules
 */
export * as ServerRequest from "./ServerRequest.js"
/**
 * The servers part of the store port: names, URLs, identities, rebind.
 *
 * @since 0.4.0
 * @category modules
 */
export * as ServerStore from "./ServerStore.js"
/**
 * The servers part of the driver port, and the shared rules of the servers table.
 *
 * @since 0.4.0
 * @category modules
 */
export * as ServerStoreDriver from "./ServerStoreDriver.js"
/**
 * What the SQL stores share: indexed columns, status lists, the open error.
 *
 * @since 0.2.0
 * @category modules
 */
export * as SqlStore from "./SqlStore.js"
/**
 * How a store fails: `StoreError`, `VersionConflict`, `TaskIdTaken`, `InstanceIdInUse`.
 *
 * @since 0.4.0
 * @category modules
 */
export * as StoreError from "./StoreError.js"
/**
 * The client: durable tool calls over MCP Tasks.
 *
 * @since 0.1.0
 * @category modules
 */
export * as TaskClient from "./TaskClient.js"
/**
 * Tasks the app already holds (a task id, an ext-tasks `SerializedTaskReference`) adopted as
 * durable rows, and rows exported as references.
 *
 * @since 0.3.0
 * @category modules
 */
export * as TaskReference from "./TaskReference.js"
/**
 * Span names, attributes and metrics the client reports through Effect's tracer and `Metric`.
 *
 * @since 0.3.0
 * @category modules
 */
export * as Telemetry from "./Telemetry.js"
/**
 * A tool's result as the protocol defines it: content blocks, structured content, tool errors.
 *
 * @since 0.4.0
 * @category modules
 */
export * as ToolResult from "./ToolResult.js"
/**
 * The one pure transition of a handle record.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Transition from "./Transition.js"
/**
 * The wire over any SDK transport that keeps a connection (stdio).
 *
 * @since 0.1.0
 * @category modules
 */
export * as TransportWire from "./TransportWire.js"
/**
 * The wire port: the six MCP requests the client needs, every failure classified.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Wire from "./Wire.js"
