/**
 * The pages of `mcp-handles ui`: the calls (a filtered, paged table with counts by status) and
 * one call (its fields, history, input requests with answer forms, strays, actions). Each page
 * has a live part (`data-live`), re-rendered by the server and pushed over server-sent events,
 * and a static part (filters, the forms one types into) that an update never replaces.
 *
 * Task ids are bearer credentials: every value goes through `html`, which shortens the ids the
 * CLI knows (each row's own are added as the row is shown, so none depends on what the process
 * met before) and legacy adopted keys by their shape; a task id is shown whole only in the call
 * page's task id field when asked, and never in a URL or a form (a key holding one travels
 * sealed, see `Seal`).
 *
 * @since 0.5.0
 */
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import * as ServerRequest from "@mcp-handles/core/ServerRequest"
import * as ToolResult from "@mcp-handles/core/ToolResult"
import * as Render from "../Render.js"
import * as Row from "../Row.js"
import * as ServerRegistry from "../ServerRegistry.js"
import * as Stuck from "../Stuck.js"
import type * as Fleet from "./Fleet.js"
import { type Html, hiddenFields, html, query, revealed } from "./Html.js"

/**
 * The status filter: a group, or one status.
 *
 * @since 0.5.0
 * @category models
 */
export const statusChoices = ["all", "open", "terminal", ...HandleRecord.Status.literals] as const

/**
 * The scope filter that means every scope.
 *
 * @since 0.5.0
 * @category constants
 */
export const everyScope = "*"

/**
 * What the calls page shows, as its query string says.
 *
 * @since 0.5.0
 * @category models
 */
export interface CallsFilter {
  readonly status: string
  readonly stuck: boolean
  /** A server identity, or empty for every server. */
  readonly server: string
  /** A scope, or `everyScope`. */
  readonly scope: string
  /** Text the key must contain (case-insensitive). */
  readonly q: string
  /** The store's cursor of the page shown. */
  readonly cursor: string
}

/**
 * The statuses of a status filter (undefined: every status).
 *
 * @since 0.5.0
 */
export const statusesOf = (status: string): ReadonlyArray<HandleRecord.Status> | undefined => {
  if (status === "open") return HandleRecord.openStatuses
  if (status === "terminal") return HandleRecord.terminalStatuses
  return (HandleRecord.Status.literals as ReadonlyArray<string>).includes(status)
    ? [status as HandleRecord.Status]
    : undefined
}

/**
 * How many calls have a status.
 *
 * @since 0.5.0
 * @category models
 */
export interface Count {
  readonly status: HandleRecord.Status
  readonly count: number
}

/**
 * @since 0.5.0
 * @category models
 */
export interface Calls {
  readonly filter: CallsFilter
  readonly records: ReadonlyArray<HandleRecord.HandleRecord>
  readonly nextCursor: string | null
  readonly counts: ReadonlyArray<Count>
  readonly servers: ReadonlyArray<HandleStore.ServerRecord>
  readonly now: number
}

const filterQuery = (filter: CallsFilter, changes: Partial<Record<keyof CallsFilter, string>> = {}) =>
  query({
    status: filter.status === "all" ? "" : filter.status,
    stuck: filter.stuck ? "1" : "",
    server: filter.server,
    scope: filter.scope,
    q: filter.q,
    cursor: filter.cursor,
    ...changes,
  })

/**
 * The calls page's address for this filter (what the live part's event stream and the pager
 * link to).
 *
 * @since 0.5.0
 */
export const callsHref = (path: string, filter: CallsFilter): string => `${path}${filterQuery(filter)}`

const relative = (at: number | null, now: number): string =>
  at === null ? "-" : at >= now ? `in ${Render.age(now, at)}` : `${Render.age(at, now)} ago`

const callHref = (record: HandleRecord.HandleRecord, extra: Record<string, string> = {}) =>
  `/call${query({ scope: record.scope, key: record.key, ...extra })}`

/** A row about to be shown: its task ids (its own, its strays', those it quotes) are shortened wherever they appear. */
const shown = (record: HandleRecord.HandleRecord): HandleRecord.HandleRecord => {
  Render.known.addRecord(record)
  return record
}

const statusCell = (record: HandleRecord.HandleRecord): Html =>
  html`<span class="status s-${record.status}">${Render.status(record)}</span>`

/**
 * The live part of the calls page: counts, the table, the pager.
 *
 * @since 0.5.0
 * @category rendering
 */
export const callsLive = (view: Calls): Html => {
  const { filter, now } = view
  const open = (r: HandleRecord.HandleRecord) => r.settledAt === null && r.status !== "in_doubt"
  const counts = html`<nav class="counts" aria-label="counts by status">${view.counts.map(
    (c) =>
      html`<a class="count" data-status="${c.status}" href="/calls${filterQuery(filter, { status: c.status, cursor: "" })}">${c.status} <b>${c.count}</b></a>`,
  )}</nav>`
  const rows = view.records.map(shown).map((r) => {
    const stuck = Stuck.reason(r, now)
    return html`<tr data-key="${r.key}" data-status="${r.status}">
<td><a href="${callHref(r)}">${r.key}</a></td><td>${statusCell(r)}</td><td>${r.tool}</td>
<td>${ServerRegistry.displayName(r.serverId)}</td><td>${r.scope}</td><td>${Render.age(r.createdAt, now)}</td>
<td>${relative(Row.lastPolledAt(r), now)}</td><td>${open(r) ? relative(r.nextPollAt, now) : "-"}</td>
<td>${Row.owner(r, now) ?? "-"}</td><td>${r.attempts}</td>
<td class="note">${stuck === undefined ? Render.truncate(Render.known.text(Render.note(r)), 160) : html`<span class="stuck">${stuck}</span>`}</td></tr>`
  })
  const table =
    view.records.length === 0
      ? html`<p class="muted" id="empty">No calls match.</p>`
      : html`<div class="scroll"><table id="calls"><thead><tr><th>Key</th><th>Status</th><th>Tool</th><th>Server</th><th>Scope</th><th>Age</th><th>Last poll</th><th>Next poll</th><th>Owner</th><th>Attempts</th><th>Problem / note</th></tr></thead><tbody>${rows}</tbody></table></div>`
  const pager = html`<div class="pager">${filter.cursor !== "" && html`<a href="/calls${filterQuery(filter, { cursor: "" })}">first page</a>`}${view.nextCursor !== null && html`<a rel="next" href="/calls${filterQuery(filter, { cursor: view.nextCursor })}">next page</a>`}</div>`
  return html`${counts}${table}${pager}`
}

/**
 * The calls page: the filters (a plain GET form: it works without JavaScript), then the live part.
 *
 * @since 0.5.0
 * @category rendering
 */
export const calls = (view: Calls): Html => {
  const { filter } = view
  const option = (value: string, label: string, selected: boolean) =>
    html`<option value="${value}"${selected ? html` selected` : ""}>${label}</option>`
  const filters = html`<form class="filters" method="get" action="/calls">
<label>Status<select name="status">${statusChoices.map((s) => option(s === "all" ? "" : s, s, (filter.status || "all") === s))}</select></label>
<label>Server<select name="server">${option("", "every server", filter.server === "")}${view.servers.map((s) => option(s.id, `${s.name} (${s.url})`, filter.server === s.id))}</select></label>
<label>Scope (* for every one)<input name="scope" value="${filter.scope}" size="10"></label>
<label>Key contains<input name="q" type="search" value="${filter.q}" size="14"></label>
<label class="inline"><input type="checkbox" name="stuck" value="1"${filter.stuck ? html` checked` : ""}> stuck only</label>
<button type="submit">Filter</button></form>`
  return html`<h1>Calls</h1>${filters}<section id="live" data-live="${callsHref("/calls/events", filter)}">${callsLive(view)}</section>`
}

/**
 * What the call page shows besides the record.
 *
 * @since 0.5.0
 * @category models
 */
export interface CallView {
  readonly record: HandleRecord.HandleRecord
  readonly servers: ReadonlyArray<HandleStore.ServerRecord>
  readonly consumers: ReadonlyArray<HandleStore.ConsumerRecord>
  readonly now: number
  /** The fields shown in full: `arguments`, `result`, `taskId`. */
  readonly reveal: ReadonlySet<string>
}

const iso = (ms: number | null) => (ms === null ? "-" : new Date(ms).toISOString())

const hidden = (
  record: HandleRecord.HandleRecord,
  reveal: ReadonlySet<string>,
  field: string,
  label: string,
) =>
  html`<span class="muted">hidden</span> <a href="${callHref(record, { reveal: [...reveal, field].join(",") })}">reveal ${label}</a>`

const json = (value: unknown, whole: boolean) => {
  const text = JSON.stringify(value, null, 2)
  return html`<pre>${whole ? revealed(text) : text}</pre>`
}

/** The actions the call allows now: they go with the status (a call ended elsewhere offers none). */
const actions = (r: HandleRecord.HandleRecord): Html => {
  const target = { scope: r.scope, key: r.key }
  const action = (name: string, label: string) =>
    html`<form method="post" action="/call/action">${hiddenFields({ ...target, action: name })}<button type="submit" class="danger">${label}…</button></form>`
  const allowed = [
    !HandleRecord.isResting(r.status) && action("cancel", "Cancel"),
    r.status === "in_doubt" && action("reissue", "Reissue"),
    r.status === "in_doubt" && action("abandon", "Abandon"),
  ].filter((a): a is Html => a !== false)
  return html`${allowed.length > 0 && html`<h2>Actions</h2><div class="actions" id="actions">${allowed}</div>`}`
}

/**
 * The live part of the call page: the actions it allows now, its fields and its history.
 *
 * @since 0.5.0
 * @category rendering
 */
export const callLive = (view: CallView): Html => {
  const { reveal, now } = view
  const r = shown(view.record)
  // Only the task id field shows it whole, when asked; the result too then (it may repeat it).
  const whole = reveal.has("taskId")
  const server = ServerRegistry.serverOf(r.serverId, view.servers)
  const stuck = Stuck.reason(r, now)
  const progress = Render.progress(r, false)
  const fields: Array<[string, Html | string]> = [
    ["status", statusCell(r)],
    ["tool", r.tool],
    ["server", `${ServerRegistry.displayName(r.serverId)} ${server?.url ?? "(URL unknown to this store)"}`],
    ["scope", r.scope],
    [
      "task id",
      r.taskId === null
        ? "-"
        : whole
          ? html`<code>${revealed(r.taskId)}</code>`
          : html`<code>${Render.redact(r.taskId)}</code> ${hidden(r, reveal, "taskId", "task id")}`,
    ],
    [
      "arguments",
      r.arguments === null
        ? `(hash only) ${r.argumentsHash}`
        : reveal.has("arguments")
          ? json(r.arguments, whole)
          : hidden(r, reveal, "arguments", "arguments"),
    ],
  ]
  if (r.result !== null) {
    fields.push([
      "result",
      reveal.has("result") ? json(ToolResult.encode(r.result), whole) : hidden(r, reveal, "result", "result"),
    ])
  }
  if (r.error !== null) fields.push(["error", `${r.error.code} ${r.error.message}`])
  if (r.snapshot?.statusMessage !== undefined) fields.push(["status message", r.snapshot.statusMessage])
  if (progress !== undefined) fields.push(["progress", progress])
  if (r.cancel !== null) {
    fields.push([
      "cancel",
      `requested ${iso(r.cancel.requestedAt)}${r.cancel.sent ? ", sent" : ", not sent yet"}`,
    ])
  }
  if (stuck !== undefined) fields.push(["stuck", html`<span class="stuck">${stuck}</span>`])
  if (r.lastProblem !== null) fields.push(["last problem", r.lastProblem])
  fields.push(
    ["owner", Row.owner(r, now) ?? "-"],
    ["lease until", iso(r.leaseExpiresAt)],
    ["next poll", iso(r.nextPollAt)],
    ["launches / polls / attempts", `${r.launches} / ${r.polls} / ${r.attempts}`],
    ["created", iso(r.createdAt)],
    ["settled", iso(r.settledAt)],
  )
  const answered = Object.entries(r.answers)
  const strays = r.strayTasks
  return html`${actions(r)}<dl>${fields.map(([label, value]) => html`<dt>${label}</dt><dd>${value}</dd>`)}</dl>
<h2>History</h2><ol class="timeline" id="history">${r.history.map((e) =>
    // An entry whose status did not change is an action someone took (see Audit).
    e.from === e.to
      ? html`<li class="action"><time datetime="${iso(e.at)}">${iso(e.at)}</time> <b>${e.cause}</b> <span class="muted">while ${e.to}, by ${e.instance ?? "-"}</span></li>`
      : html`<li><time datetime="${iso(e.at)}">${iso(e.at)}</time> <b>${e.from === null ? e.to : `${e.from} → ${e.to}`}</b> <span class="muted">${e.cause}, by ${e.instance ?? "-"}</span></li>`,
  )}</ol>
${answered.length > 0 && html`<h2>Answers</h2><ul>${answered.map(([key, a]) => html`<li>${key}: ${a.acknowledged ? "sent" : "stored, not yet sent"}</li>`)}</ul>`}
${strays.length > 0 && html`<h2>Stray tasks</h2><ul>${strays.map((s) => html`<li><code>${Render.redact(s.taskId)}</code> received ${iso(s.receivedAt)}: ${s.cancelSent ? "cancelled" : `cancel pending (${s.cancelFailures} failed)`}</li>`)}</ul>`}
<h2>Outcome consumers of scope ${r.scope}</h2>${
    view.consumers.length === 0
      ? html`<p class="muted">No consumer reads this scope's outcomes.</p>`
      : html`<ul>${view.consumers.map((c) => html`<li>${c.consumer}: last seen ${iso(c.lastSeenAt)}</li>`)}</ul>`
  }`
}

/** One form field of an elicitation, by its schema. */
const fieldInput = (name: string, field: ServerRequest.Field, required: boolean): Html => {
  const id = `f-${name}`
  const label = field.title ?? name
  // A checkbox left unticked is an answer (false), so a boolean is never `required` here.
  const attrs = html` id="${id}" name="field.${name}"${required && field.type !== "boolean" ? html` required` : ""}`
  const choices = ServerRequest.choices(field)
  const description =
    field.description === undefined ? "" : html`<small class="muted">${field.description}</small>`
  if (field.type === "boolean") {
    return html`<label class="inline" for="${id}"><input type="checkbox" value="true"${attrs}${field.default === true ? html` checked` : ""}> ${label}</label>${description}`
  }
  if (choices !== undefined) {
    return html`<label for="${id}">${label}<select${attrs}${field.type === "array" ? html` multiple` : ""}>${choices.map((c) => html`<option value="${c.value}"${field.default === c.value ? html` selected` : ""}>${c.title}</option>`)}</select></label>${description}`
  }
  const type = field.type === "number" || field.type === "integer" ? "number" : "text"
  const value = field.default === undefined ? "" : String(field.default)
  return html`<label for="${id}">${label}<input type="${type}"${field.type === "number" ? html` step="any"` : ""} value="${value}"${attrs}></label>${description}`
}

/**
 * The answer form of one input request: a field per property of an elicitation form; an
 * accept button for a URL elicitation; a JSON box for anything else.
 *
 * @since 0.5.0
 * @category rendering
 */
export const answerForm = (record: HandleRecord.HandleRecord, inputKey: string, raw: unknown): Html => {
  const request = ServerRequest.decode(raw as never)
  const target = { scope: record.scope, key: record.key, inputKey }
  const body = (() => {
    if (request.method === "elicitation/create" && "requestedSchema" in request.params) {
      const form = request as ServerRequest.ElicitationForm
      const required = new Set(form.params.requestedSchema.required ?? [])
      return html`${Object.entries(form.params.requestedSchema.properties).map(([name, field]) => html`<div>${fieldInput(name, field, required.has(name))}</div>`)}<input type="hidden" name="kind" value="form">`
    }
    if (request.method === "elicitation/create") {
      return html`<p>Visit <code>${String((request.params as { url?: string }).url ?? "")}</code>, then accept.</p><input type="hidden" name="kind" value="url">`
    }
    return html`<label>JSON response<textarea name="json" rows="4" cols="50" required></textarea></label><input type="hidden" name="kind" value="json">`
  })()
  return html`<form method="post" action="/call/answer" class="answer" data-input="${inputKey}"><fieldset><legend>Input <code>${inputKey}</code>: ${ServerRequest.message(request)}</legend>
${hiddenFields(target)}${body}<div class="actions"><button type="submit" name="action" value="accept">Answer</button>${request.method === "elicitation/create" && html`<button type="submit" name="action" value="decline">Decline</button>`}</div></fieldset></form>`
}

/**
 * The call page: a notice (what an action did), the input forms, then the live part (the
 * actions this call allows now, its fields and history).
 *
 * @since 0.5.0
 * @category rendering
 */
export const call = (
  view: CallView,
  notice: { readonly text: string; readonly error: boolean } | undefined,
): Html => {
  const r = shown(view.record)
  const waiting =
    r.status === "input_required" && r.inputRequests !== null
      ? Object.entries(r.inputRequests).filter(([key]) => !Object.hasOwn(r.answers, key))
      : []
  const live = `/call/events${query({ scope: r.scope, key: r.key, reveal: [...view.reveal].join(",") })}`
  return html`<p><a href="/calls">← all calls</a></p><h1>${r.key}</h1>
${notice !== undefined && html`<p class="notice${notice.error ? " error" : ""}" role="status">${notice.text}</p>`}
${waiting.length > 0 && html`<h2>Waiting for input</h2>${waiting.map(([key, request]) => answerForm(r, key, request))}`}
<section id="live" data-live="${live}">${callLive(view)}</section>`
}

/**
 * The confirmation of an action: what it will do, and a button that sends the same form again
 * with `confirm=yes`. Nothing happens until then.
 *
 * @since 0.5.0
 * @category rendering
 */
export const confirm = (
  path: string,
  fields: Readonly<Record<string, string>>,
  question: string,
  consequence: string,
  back = `/call${query({ scope: fields.scope, key: fields.key })}`,
): Html =>
  html`<h1>${question}</h1><p>${consequence}</p><form method="post" action="${path}">${hiddenFields({ ...fields, confirm: "yes" })}<div class="actions"><button type="submit" class="danger" id="confirm">Yes, ${fields.action ?? "go on"}</button><a href="${back}">No, go back</a></div></form>`

/**
 * A refusal or a failure, as a page.
 *
 * @since 0.5.0
 * @category rendering
 */
export const problem = (text: string): Html => html`<h1>Refused</h1><p class="notice error">${text}</p>`

const ago = (at: number, now: number) =>
  at >= now ? `in ${Render.age(now, at)}` : `${Render.age(at, now)} ago`

/**
 * The live part of the fleet page: the instances by their leases, the consumers by their
 * backlog.
 *
 * @since 0.5.0
 * @category rendering
 */
export const fleetLive = (view: Fleet.FleetView): Html => {
  const { now } = view
  const instances =
    view.instances.length === 0
      ? html`<p class="muted" id="no-instances">No instance holds an instance id or a lease on an open call.</p>`
      : html`<div class="scroll"><table id="instances"><thead><tr><th>Instance</th><th>State</th><th>Host, pid</th><th>Heartbeat</th><th>Rows held</th><th>Leases run out</th><th>Lease renewed until</th><th>Last write</th></tr></thead><tbody>${view.instances.map(
          (i) => {
            const live = i.held > 0 || i.holder !== null
            return html`<tr data-instance="${i.id}" data-live-instance="${live ? "yes" : "no"}"><td>${i.id}</td><td>${live ? html`<span class="status s-completed">${i.held > 0 ? "live" : "idle"}</span>` : html`<span class="status s-failed">silent</span>`}</td><td>${i.holder === null || i.holder.host === null ? "-" : `${i.holder.host}, ${i.holder.pid ?? "-"}`}</td><td class="heartbeat">${i.holder === null ? "-" : ago(i.holder.heartbeatAt, now)}</td><td>${i.held}</td><td>${i.lapsed}</td><td>${i.leaseUntil === 0 ? "-" : ago(i.leaseUntil, now)}</td><td>${i.lastWrite === 0 ? "-" : ago(i.lastWrite, now)}</td></tr>`
          },
        )}</tbody></table></div>`
  const backlogs =
    view.backlogs.length === 0
      ? html`<p class="muted" id="no-consumers">No consumer reads outcomes from this store.</p>`
      : html`<div class="scroll"><table id="consumers"><thead><tr><th>Consumer</th><th>Scope</th><th>Waiting</th><th>Last claimed</th><th>First seen</th></tr></thead><tbody>${view.backlogs.map(
          (b) =>
            html`<tr data-consumer="${b.consumer.consumer}" data-scope="${b.consumer.scope}"><td>${b.consumer.consumer}</td><td>${b.consumer.scope}</td><td>${b.waiting}${b.more ? "+" : ""}</td><td>${ago(b.consumer.lastSeenAt, now)}</td><td>${ago(b.consumer.firstSeenAt, now)}</td></tr>`,
        )}</tbody></table></div>`
  return html`<h2>Instances</h2>${instances}<h2>Outcome backlog per consumer</h2>${backlogs}`
}

/**
 * The fleet page: the processes holding an instance id (also those holding no call), and the
 * owners of leases on open calls.
 *
 * @since 0.5.0
 * @category rendering
 */
export const fleet = (view: Fleet.FleetView): Html =>
  html`<h1>Fleet</h1><p class="muted">Instances as the store knows them: a process holding its instance id (its heartbeat), idle if it holds no call; and the owners of leases on open calls, where one whose leases ran out and that holds no id has detached, died or hangs. Waiting: outcomes settled since the consumer last claimed (those claimed and not yet acknowledged are not counted).</p><section id="live" data-live="/fleet/events">${fleetLive(view)}</section>`

/**
 * The live part of the servers page.
 *
 * @since 0.5.0
 * @category rendering
 */
export const serversLive = (view: Fleet.ServersView): Html => {
  const { now } = view
  return view.servers.length === 0
    ? html`<p class="muted" id="no-servers">No servers in the store.</p>`
    : html`<div class="scroll"><table id="servers"><thead><tr><th>Name</th><th>URL</th><th>First seen</th><th>Last seen</th><th>Calls</th></tr></thead><tbody>${view.servers.map(
        (s) =>
          html`<tr data-server="${s.server.name}"><td><a href="/calls${query({ server: s.server.id, scope: everyScope })}">${s.server.name}</a></td><td><code>${s.server.url}</code></td><td>${ago(s.server.firstSeenAt, now)}</td><td>${ago(s.server.lastSeenAt, now)}</td><td class="calls">${s.calls}</td></tr>`,
      )}</tbody></table></div>`
}

/**
 * The servers page: the live table, then the rebind form (outside the live part, so an update
 * never resets a choice being made).
 *
 * @since 0.5.0
 * @category rendering
 */
export const servers = (
  view: Fleet.ServersView,
  notice: { readonly text: string; readonly error: boolean } | undefined,
): Html => {
  const names = view.servers.map((s) => s.server.name)
  const select = (name: string) =>
    html`<select name="${name}" id="rebind-${name}">${names.map((n) => html`<option value="${n}">${n}</option>`)}</select>`
  return html`<h1>Servers</h1>
${notice !== undefined && html`<p class="notice${notice.error ? " error" : ""}" role="status">${notice.text}</p>`}
<section id="live" data-live="/servers/events">${serversLive(view)}</section>
${names.length > 1 && html`<h2>Rebind</h2><form method="post" action="/servers/rebind" class="filters" id="rebind"><input type="hidden" name="action" value="rebind"><label>Move every call of${select("from")}</label><label>to${select("to")}</label><button type="submit" class="danger">Rebind…</button></form>`}`
}
