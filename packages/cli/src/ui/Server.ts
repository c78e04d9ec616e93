/**
 * The web server of `mcp-handles ui`: @effect/platform's router on Node's HTTP server, over a
 * CLI session (the same store, the same client the commands use). It reads the store for every
 * page, and once a tick for each view open tabs watch live (`Refresh`); it acts only through
 * the client (`cancel`, `reissue`, `abandon`, `answer`), under the session's instance id, and
 * records in the call's history who acted.
 *
 * @since 0.5.0
 */
import { createServer } from "node:http"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as UrlParams from "@effect/platform/UrlParams"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import type { JsonValue } from "@mcp-handles/core/Json"
import * as ServerRequest from "@mcp-handles/core/ServerRequest"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { type CliError, fromKnown, usage } from "../CliError.js"
import * as Common from "../Common.js"
import * as Stuck from "../Stuck.js"
import * as Audit from "./Audit.js"
import * as Fleet from "./Fleet.js"
import * as Guard from "./Guard.js"
import { type Html, html, page, param, query, js as script, css as stylesheet } from "./Html.js"
import * as Refresh from "./Refresh.js"
import * as Seal from "./Seal.js"
import * as Views from "./Views.js"

/**
 * @since 0.5.0
 * @category models
 */
export interface Options {
  readonly session: Common.Session
  readonly host: string
  /** 0: any free port. */
  readonly port: number
  /** The secret of the printed URL (a fresh `Guard.token()` unless a test fixes it). */
  readonly token: string
  /** How often a live page reads the store again. */
  readonly refresh?: Duration.DurationInput | undefined
  /** Who acts from the page, as the calls' history names it (the session's instance id). */
  readonly actor: string
  /** How long the server keeps driving a call it acted on (cancel, reissue, answer). */
  readonly followFor?: Duration.DurationInput | undefined
}

/**
 * Rows per page, and how many stuck calls the stuck view shows at most.
 *
 * @since 0.5.0
 * @category constants
 */
export const limits = {
  pageSize: 50,
  stuckCap: 500,
} as const

const securityHeaders = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  // same-origin, not no-referrer: under no-referrer a browser sends `Origin: null` with a form,
  // and the guard could not tell the page's own actions from anyone's.
  "referrer-policy": "same-origin",
  "cache-control": "no-store",
}

const respond = (body: Html, status = 200, title = "Calls") =>
  HttpServerResponse.text(page(title, body), {
    status,
    contentType: "text/html; charset=utf-8",
    headers: securityHeaders,
  })

const filterOf = (
  params: Readonly<Record<string, string | ReadonlyArray<string>>>,
  defaultScope: string,
): Views.CallsFilter => ({
  status: (Views.statusChoices as ReadonlyArray<string>).includes(param(params, "status"))
    ? param(params, "status")
    : "all",
  stuck: param(params, "stuck") === "1",
  server: param(params, "server"),
  // One scope unless asked for every one (`*`), as every command reads.
  scope: param(params, "scope") || defaultScope,
  q: param(params, "q"),
  cursor: param(params, "cursor"),
})

/**
 * Reads the calls page from the store: one page at the filter's cursor, filtered by the store
 * (status, server, text in the key, one scope or every one) and served by its indexes; or the
 * stuck calls (every scheduled row, judged in memory, as `list --stuck` does); and the exact
 * counts by status of the rows the filter selects, whatever their status.
 *
 * @since 0.5.0
 */
export const loadCalls = (
  session: Common.Session,
  filter: Views.CallsFilter,
): Effect.Effect<Views.Calls, CliError> =>
  Effect.gen(function* () {
    const store = session.store
    const now = yield* store.now
    const statuses = Views.statusesOf(filter.status)
    const selected = {
      scope: filter.scope === Views.everyScope ? undefined : filter.scope,
      serverId: filter.server === "" ? undefined : filter.server,
      keyContains: filter.q === "" ? undefined : filter.q,
    }
    const page: HandleStore.ListPage = filter.stuck
      ? {
          records: (yield* Common.listAllScopes(session, { ...selected, statuses, scheduled: true }))
            .filter((r) => Stuck.reason(r, now) !== undefined)
            .slice(0, limits.stuckCap),
          nextCursor: null,
        }
      : yield* store
          .list({
            ...selected,
            statuses,
            limit: limits.pageSize,
            ...(filter.cursor === "" ? {} : { cursor: filter.cursor }),
          })
          .pipe(Effect.mapError(fromKnown))
    const counted = yield* store.count(selected).pipe(Effect.mapError(fromKnown))
    const counts = HandleRecord.Status.literals.map((status) => ({ status, count: counted[status] }))
    const servers = yield* store.listServers.pipe(Effect.mapError(fromKnown))
    return { filter, records: page.records, nextCursor: page.nextCursor, counts, servers, now }
  })

const revealOf = (raw: string): ReadonlySet<string> =>
  new Set(raw.split(",").filter((f) => f === "arguments" || f === "result" || f === "taskId"))

/**
 * Reads one call and what its page shows besides.
 *
 * @since 0.5.0
 */
export const loadCall = (
  session: Common.Session,
  scope: string,
  key: string,
  reveal: ReadonlySet<string>,
): Effect.Effect<Views.CallView, CliError> =>
  Effect.gen(function* () {
    const record = yield* session.client.get(key, scope).pipe(Effect.mapError(fromKnown))
    const servers = yield* session.store.listServers.pipe(Effect.mapError(fromKnown))
    const consumers = yield* session.store.listConsumers(scope).pipe(Effect.mapError(fromKnown))
    const now = yield* session.store.now
    return { record, servers, consumers, now, reveal }
  })

/**
 * The HTML of a live view as the refresh reads it; a failed read (the call deleted meanwhile)
 * shows as a notice, rendered like everything else (its message may quote a key).
 */
const text = (render: Effect.Effect<Html, CliError>): Effect.Effect<string> =>
  render.pipe(
    Effect.catchAll((error) => Effect.succeed(html`<p class="notice error">${error.message}</p>`)),
    Effect.map((h) => h.text),
  )

/** An event stream of a view's HTML: sent at once, then whenever it changes. */
const live = (updates: Stream.Stream<string>) =>
  HttpServerResponse.stream(
    updates.pipe(
      Stream.map(
        (text) =>
          `event: update\n${text
            .split("\n")
            .map((line) => `data: ${line}\n`)
            .join("")}\n`,
      ),
      // A comment now and then: a closed tab is noticed, and the stream ends.
      Stream.merge(
        Stream.repeatValue(": keep-alive\n\n").pipe(Stream.schedule(Schedule.spaced("15 seconds"))),
      ),
      Stream.encodeText,
    ),
    { contentType: "text/event-stream", headers: { ...securityHeaders, "x-accel-buffering": "no" } },
  )

const describe: Record<string, readonly [string, string]> = {
  cancel: [
    "Cancel this call?",
    "The intent to cancel is recorded, then tasks/cancel is sent. The server decides: a task that finishes first completes.",
  ],
  reissue: [
    "Send this in-doubt call again?",
    "It is sent again with the same idempotency key: safe only with a server that deduplicates on it.",
  ],
  abandon: [
    "Abandon this in-doubt call?",
    "It ends cancelled and is never sent again; a task that still turns up for it is cancelled.",
  ],
}

/** The answer the form describes, typed by the request's schema. */
const answerOf = (
  record: HandleRecord.HandleRecord,
  form: Readonly<Record<string, string | ReadonlyArray<string>>>,
): Effect.Effect<JsonValue, CliError> =>
  Effect.suspend(() => {
    const inputKey = param(form, "inputKey")
    const raw = record.inputRequests?.[inputKey]
    if (raw === undefined) return Effect.fail(usage(`${record.key} does not ask for ${inputKey}`))
    if (param(form, "action") === "decline") return Effect.succeed({ action: "decline" })
    const request = ServerRequest.decode(raw)
    if (request.method === "elicitation/create" && "requestedSchema" in request.params) {
      const schema = (request as ServerRequest.ElicitationForm).params.requestedSchema
      const content: Record<string, JsonValue> = {}
      for (const [name, field] of Object.entries(schema.properties)) {
        const given = form[`field.${name}`]
        const values = given === undefined ? [] : typeof given === "string" ? [given] : [...given]
        if (field.type === "boolean") content[name] = values.includes("true")
        else if (field.type === "array") content[name] = values
        else if (values[0] === undefined || values[0] === "") continue
        else if (field.type === "number" || field.type === "integer") content[name] = Number(values[0])
        else content[name] = values[0]
      }
      return Effect.succeed({ action: "accept", content })
    }
    if (request.method === "elicitation/create") return Effect.succeed({ action: "accept" })
    return Effect.try({
      try: () => JSON.parse(param(form, "json")) as JsonValue,
      catch: () => usage("the response is not JSON"),
    })
  })

/**
 * Serves the UI until the scope closes; returns the URL to open (with the token).
 *
 * @since 0.5.0
 */
export const serve = (options: Options): Effect.Effect<string, CliError, Scope.Scope> =>
  Effect.gen(function* () {
    const { session } = options
    const client = session.client
    const every = options.refresh ?? "1 second"
    const followFor = options.followFor ?? "10 minutes"
    const scope = yield* Effect.scope
    const refresh = yield* Refresh.make(every)
    /** A view's live stream, shared by every tab that watches the same address. */
    const watch = (render: Effect.Effect<Html, CliError>) =>
      Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
        live(refresh.watch(request.url, text(render))),
      )
    // The calls acted on here are driven from here until they rest (or for `followFor`), as
    // `mcp-handles cancel` observes its cancel: otherwise an answer would wait for another process.
    const follow = (key: string, callScope: string) =>
      client
        .settle(key, callScope, { waitForInput: true })
        .pipe(Effect.timeout(followFor), Effect.ignore, Effect.forkIn(scope), Effect.asVoid)

    const back = (fields: { readonly scope: string; readonly key: string }, done: string) =>
      HttpServerResponse.empty({
        status: 303,
        headers: {
          ...securityHeaders,
          location: `/call${query({ scope: fields.scope, key: fields.key, done })}`,
        },
      })

    const formOf = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      Effect.map(request.urlParamsBody, UrlParams.toRecord),
    ).pipe(Effect.mapError(() => usage("unreadable form")))

    const router = HttpRouter.empty.pipe(
      HttpRouter.get("/", HttpServerResponse.redirect("/calls", { status: 303, headers: securityHeaders })),
      HttpRouter.get(
        "/calls",
        Effect.gen(function* () {
          const params = yield* HttpServerRequest.ParsedSearchParams
          const view = yield* loadCalls(session, filterOf(params, session.scope))
          return respond(Views.calls(view))
        }),
      ),
      HttpRouter.get(
        "/calls/events",
        Effect.flatMap(HttpServerRequest.ParsedSearchParams, (params) =>
          watch(Effect.map(loadCalls(session, filterOf(params, session.scope)), Views.callsLive)),
        ),
      ),
      HttpRouter.get(
        "/call",
        Effect.gen(function* () {
          const params = yield* HttpServerRequest.ParsedSearchParams
          const view = yield* loadCall(
            session,
            param(params, "scope") || session.scope,
            param(params, "key"),
            revealOf(param(params, "reveal")),
          )
          const done = param(params, "done")
          return respond(
            Views.call(view, done === "" ? undefined : { text: `Done: ${done}.`, error: false }),
            200,
            view.record.key,
          )
        }),
      ),
      HttpRouter.get(
        "/call/events",
        Effect.flatMap(HttpServerRequest.ParsedSearchParams, (params) =>
          watch(
            Effect.map(
              loadCall(
                session,
                param(params, "scope") || session.scope,
                param(params, "key"),
                revealOf(param(params, "reveal")),
              ),
              Views.callLive,
            ),
          ),
        ),
      ),
      HttpRouter.post(
        "/call/action",
        Effect.gen(function* () {
          const form = yield* formOf
          const fields = {
            scope: param(form, "scope"),
            key: param(form, "key"),
            action: param(form, "action"),
          }
          const text = describe[fields.action]
          if (text === undefined) return yield* Effect.fail(usage(`no action ${fields.action}`))
          if (param(form, "confirm") !== "yes") {
            return respond(Views.confirm("/call/action", fields, text[0], text[1]), 200, "Confirm")
          }
          switch (fields.action) {
            case "cancel":
              yield* client.cancel(fields.key, fields.scope).pipe(Effect.mapError(fromKnown))
              // The cancel asked changes no status: the history names who asked.
              yield* Audit.record(session.store, fields, "cancel asked (ui)", options.actor)
              yield* follow(fields.key, fields.scope)
              break
            case "reissue":
              yield* client.reissue(fields.key, fields.scope).pipe(Effect.mapError(fromKnown))
              yield* follow(fields.key, fields.scope)
              break
            case "abandon":
              yield* client.abandon(fields.key, fields.scope).pipe(Effect.mapError(fromKnown))
              break
          }
          return back(fields, fields.action)
        }),
      ),
      HttpRouter.post(
        "/call/answer",
        Effect.gen(function* () {
          const form = yield* formOf
          const target = { scope: param(form, "scope"), key: param(form, "key") }
          const inputKey = param(form, "inputKey")
          const record = yield* client.get(target.key, target.scope).pipe(Effect.mapError(fromKnown))
          const answer = yield* answerOf(record, form)
          if (param(form, "confirm") !== "yes") {
            // The same fields again, with confirm=yes: what was typed is sent only once confirmed
            // (a sealed one opened here, and sealed again by the confirmation's form).
            const fields: Record<string, string> = {}
            for (const name of Object.keys(form)) {
              const plain = name.startsWith(Seal.prefix) ? name.slice(Seal.prefix.length) : name
              fields[plain] = param(form, plain)
            }
            return respond(
              Views.confirm(
                "/call/answer",
                fields,
                `Send this answer to ${inputKey}?`,
                JSON.stringify(answer),
              ),
              200,
              "Confirm",
            )
          }
          yield* client.answer(target.key, inputKey, answer, target.scope).pipe(Effect.mapError(fromKnown))
          yield* Audit.record(session.store, target, `answered ${inputKey} (ui)`, options.actor)
          yield* follow(target.key, target.scope)
          return back(target, `answered ${inputKey}`)
        }),
      ),
      HttpRouter.get(
        "/fleet",
        Effect.map(Fleet.loadFleet(session), (view) => respond(Views.fleet(view), 200, "Fleet")),
      ),
      HttpRouter.get("/fleet/events", watch(Effect.map(Fleet.loadFleet(session), Views.fleetLive))),
      HttpRouter.get(
        "/servers",
        Effect.gen(function* () {
          const params = yield* HttpServerRequest.ParsedSearchParams
          const view = yield* Fleet.loadServers(session)
          const done = param(params, "done")
          return respond(
            Views.servers(view, done === "" ? undefined : { text: `Done: ${done}.`, error: false }),
            200,
            "Servers",
          )
        }),
      ),
      HttpRouter.get("/servers/events", watch(Effect.map(Fleet.loadServers(session), Views.serversLive))),
      HttpRouter.post(
        "/servers/rebind",
        Effect.gen(function* () {
          const form = yield* formOf
          const fields = { action: "rebind", from: param(form, "from"), to: param(form, "to") }
          if (fields.from === "" || fields.to === "") {
            return yield* Effect.fail(usage("rebind: choose the server to move from and the one to move to"))
          }
          if (param(form, "confirm") !== "yes") {
            return respond(
              Views.confirm(
                "/servers/rebind",
                fields,
                `Move every call of ${fields.from} to ${fields.to}?`,
                `Every call of ${fields.from}, in every scope, is then polled at ${fields.to}'s URL, as mcp-handles servers --rebind ${fields.from}=${fields.to} does. Moving them back is another rebind.`,
                "/servers",
              ),
              200,
              "Confirm",
            )
          }
          const moved = yield* Fleet.rebind(session, fields.from, fields.to, options.actor)
          return HttpServerResponse.empty({
            status: 303,
            headers: {
              ...securityHeaders,
              location: `/servers${query({ done: `moved ${moved} call(s) of ${fields.from} to ${fields.to}` })}`,
            },
          })
        }),
      ),
      // Browsers ask for it on every page; nothing to show.
      HttpRouter.get("/favicon.ico", Effect.succeed(HttpServerResponse.empty({ status: 204 }))),
      HttpRouter.get(
        "/assets/ui.css",
        Effect.succeed(
          HttpServerResponse.text(stylesheet, {
            contentType: "text/css; charset=utf-8",
            headers: securityHeaders,
          }),
        ),
      ),
      HttpRouter.get(
        "/assets/ui.js",
        Effect.succeed(
          HttpServerResponse.text(script, {
            contentType: "text/javascript; charset=utf-8",
            headers: securityHeaders,
          }),
        ),
      ),
    )

    const server = yield* NodeHttpServer.make(() => createServer(), {
      host: options.host,
      port: options.port,
    }).pipe(
      Effect.mapError((error) =>
        usage(`ui: cannot listen on ${options.host}:${options.port}: ${error.message}`),
      ),
    )
    const address = server.address
    const port = address._tag === "TcpAddress" ? address.port : options.port
    const hosts = Guard.allowedHosts(options.host, port)

    const app = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const url = new URL(request.url, "http://ui.invalid")
      const verdict = Guard.check(
        {
          method: request.method,
          host: request.headers.host,
          origin: request.headers.origin,
          fetchSite: request.headers["sec-fetch-site"],
          cookie: request.cookies[Guard.cookieName],
          queryToken: url.searchParams.get("token") ?? undefined,
        },
        options.token,
        hosts,
      )
      switch (verdict._tag) {
        case "Refuse":
          return HttpServerResponse.text(`${verdict.reason}\n`, {
            status: verdict.status,
            headers: securityHeaders,
          })
        case "AllowAndRemember": {
          // The token leaves the address bar (and the history) at once; the cookie carries it.
          url.searchParams.delete("token")
          return HttpServerResponse.empty({
            status: 303,
            headers: {
              ...securityHeaders,
              location: `${url.pathname}${url.search}`,
              "set-cookie": `${Guard.cookieName}=${options.token}; Path=/; HttpOnly; SameSite=Strict`,
            },
          })
        }
        case "Allow":
          return yield* router.pipe(
            Effect.catchTags({
              RouteNotFound: () => Effect.succeed(respond(Views.problem("no such page"), 404, "Not found")),
              CliError: (error) => Effect.succeed(respond(Views.problem(error.message), 409, "Refused")),
            }),
          )
      }
    })
    yield* HttpServer.serveEffect(app).pipe(Effect.provideService(HttpServer.HttpServer, server))
    const shown = options.host.includes(":") ? `[${options.host}]` : options.host
    return `http://${shown}:${port}/?token=${options.token}`
  })
