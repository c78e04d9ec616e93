/**
 * What the client tells an observer: span names and attributes (through Effect's tracer, so any
 * `Tracer` layer, e.g. `@effect/opentelemetry`, sees them) and metrics (through Effect's `Metric`
 * module). Every client instruments itself; there is nothing to switch on. Task ids never appear
 * raw: spans carry `Redaction.taskId`.
 *
 * The gauge of open calls (`openCalls`) counts the calls this process has seen, by the status
 * it last saw them in: no store operation counts rows by status, and paging through `list` on
 * every sweep would cost more than the polls it reports on.
 *
 * @since 0.3.0
 */
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"

/**
 * Span names. `callTool` spans the durable call from its start to the handle; a wire request's
 * span is named by its MCP method (`tools/call`, `tasks/get`, ...); a store write's span by its
 * operation (`mcp_handles.store.update`, ...).
 *
 * @since 0.3.0
 * @category constants
 */
export const spans = {
  callTool: "mcp_handles.callTool",
  storePrefix: "mcp_handles.store.",
} as const

/**
 * Span attribute keys.
 *
 * @since 0.3.0
 * @category constants
 */
export const attributes = {
  /** The MCP method of a wire request. */
  method: "mcp.method",
  /** The tool a call names. */
  tool: "mcp.tool.name",
  /** The configured server's name. */
  serverName: "mcp_handles.server.name",
  /** The server identity rows refer to (a hash of name and URL). */
  serverId: "mcp_handles.server.id",
  /** A task id shortened by `Redaction.taskId`: enough to tell two apart, never the credential. */
  taskId: "mcp_handles.task_id",
  /** The task status a `tasks/get` answer reported, or a row's status after a store write. */
  status: "mcp_handles.status",
  /** `ok`, or the wire error's tag (`NotSent`, `NoAnswer`, `RpcErrorAnswer`, `ServerBusy`, ...). */
  outcome: "mcp_handles.outcome",
  key: "mcp_handles.key",
  scope: "mcp_handles.scope",
  /** The store operation of a store write. */
  operation: "mcp_handles.store.operation",
  /** On `callTool`: false when the key existed and the call attached to it. */
  launched: "mcp_handles.launched",
  /**
   * On the push stream metrics: why a `subscriptions/listen` stream was opened (`first`,
   * `relisten` for new tasks, `reconnect` after a drop) or why it ended (`dropped`, `ended` by the
   * server, `silent`: half-open, nothing heard for `PushOptions.idleMs`).
   */
  pushReason: "mcp_handles.push.reason",
} as const

/**
 * How a wire request ended: `ok`, or the tag of its `Wire.WireError`.
 *
 * @since 0.3.0
 * @category models
 */
export type OutcomeClass =
  | "ok"
  | "NotSent"
  | "NoAnswer"
  | "RpcErrorAnswer"
  | "ServerBusy"
  | "Unauthorized"
  | "MalformedAnswer"
  | "UnsupportedVersion"
  | "defect"

// Milliseconds, 1 ms to about 65 s: a poll or a store write that takes longer is its own problem.
const latency = (name: string, description: string) =>
  Metric.histogram(name, MetricBoundaries.exponential({ start: 1, factor: 2, count: 17 }), description)

const counter = (name: string, description: string) =>
  Metric.counter(name, { description, incremental: true })

/**
 * `tasks/get` requests, tagged `outcome` (an `OutcomeClass`).
 *
 * @since 0.3.0
 * @category metrics
 */
export const polls = counter("mcp_handles_polls_total", "tasks/get requests sent, by outcome class")

/**
 * How long a `tasks/get` request took, in milliseconds (by Effect's `Clock`).
 *
 * @since 0.3.0
 * @category metrics
 */
export const pollLatency = latency("mcp_handles_poll_latency_ms", "tasks/get latency in milliseconds")

/**
 * Calls that went into doubt (a call that may have reached the server without a usable answer,
 * or one a crash interrupted). A write that leaves a row in doubt counts unless this process last
 * saw the row in doubt already (a lease taken on an in-doubt row writes it again).
 *
 * @since 0.3.0
 * @category metrics
 */
export const inDoubt = counter("mcp_handles_in_doubt_total", "transitions of calls into in_doubt")

/**
 * Rows a sweep of this instance leased (`claimDue`, `spreadDue`): rows that nobody held a live
 * lease on (their driver's process died, handed them off, or a previous process of this
 * instance left them), taken over here.
 *
 * @since 0.3.0
 * @category metrics
 */
export const leaseTakeovers = counter(
  "mcp_handles_lease_takeovers_total",
  "rows a reconciler sweep of this instance leased",
)

/**
 * How long a store write took, in milliseconds, tagged `operation`.
 *
 * @since 0.3.0
 * @category metrics
 */
export const storeWriteLatency = latency(
  "mcp_handles_store_write_latency_ms",
  "store write latency in milliseconds, by operation",
)

/**
 * Calls not yet at rest or in doubt (`pending`, `working`, `input_required`, `in_doubt`), tagged
 * `status`, as this process last saw them: a call counts from the moment this process writes or
 * reads it in one of those statuses until it sees it leave them. A process counts only the
 * calls it touched (the ones it drives, claims or is asked about), not every row of the store;
 * it keeps up to 10,000 calls in view, dropping the longest unseen.
 *
 * @since 0.3.0
 * @category metrics
 */
export const openCalls = Metric.gauge("mcp_handles_open_calls", {
  description: "calls this process last saw open or in doubt, by status",
})

/**
 * `notifications/tasks` received on `subscriptions/listen` streams (each one a task state that
 * came by itself instead of a poll), counted whether or not it changed the row.
 *
 * @since 0.4.0
 * @category metrics
 */
export const pushes = counter(
  "mcp_handles_pushes_total",
  "notifications/tasks received on task subscriptions",
)

/**
 * `subscriptions/listen` streams the server acknowledged, tagged `pushReason`: `first`,
 * `relisten` (opened again to cover new tasks) or `reconnect` (after a drop, an end or a silence).
 *
 * @since 0.4.0
 * @category metrics
 */
export const pushStreams = counter(
  "mcp_handles_push_streams_total",
  "task subscription streams acknowledged, by why they were opened",
)

/**
 * `subscriptions/listen` streams that ended other than to be replaced by a larger one, tagged
 * `pushReason`: `dropped`, `ended` (by the server) or `silent` (half-open: nothing heard for
 * `PushOptions.idleMs`, so opened again).
 *
 * @since 0.4.0
 * @category metrics
 */
export const pushStreamEnds = counter(
  "mcp_handles_push_stream_ends_total",
  "task subscription streams that dropped, ended or fell silent",
)
