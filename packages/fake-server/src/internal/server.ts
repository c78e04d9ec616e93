import { type Config, defaults, type Fault, type Tool } from "../Config.js"
import type { FakeServer, Options, ServeResult } from "../FakeServer.js"
import type * as Ledger from "../Ledger.js"
import * as ServerClock from "../ServerClock.js"
import { type Held, type ServerContext, tooManyRequests } from "./context.js"
import { dispatch } from "./dispatcher.js"
import { decodeEnvelope, type EnvelopedRequest, parseBody, peek } from "./envelope.js"
import { eraOf, refuseLegacy } from "./era.js"
import { faultLabel, makeFaultSchedule, phaseOf } from "./faultSchedule.js"
import { acceptsEventStream, hold } from "./hold.js"
import { makeHostGuard } from "./hostGuard.js"
import { isObject } from "./json.js"
import * as LedgerRecorder from "./ledger.js"
import { checkParamHeaders } from "./paramHeaders.js"
import { progressStream } from "./progress.js"
import * as Edge2025 from "./protocol2025/edge.js"
import { seededRandom, streamSeed } from "./random.js"
import { makeRateLimiter } from "./rateLimiter.js"
import {
  cutLog,
  eventStreamHeaders,
  fromHandler,
  type Handled,
  type LogFields,
  statusText,
  toResponse,
} from "./reply.js"
import { makeSubscriptions } from "./subscriptions.js"
import { observedView } from "./taskMethods.js"
import { isTerminal } from "./taskRecord.js"
import { expiresAtOf, makeTaskStore } from "./taskStore.js"
import { quietUntil } from "./timeline.js"
import { detailedTask, stateKey } from "./wire.js"

/** The options a server is built with when none are given. */
export const optionDefaults = {
  dropStyle: "error-body",
  notifyEveryMs: 100,
  keepAliveMs: 15_000,
} as const

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * A fake MCP Tasks server built from a configuration. `connectionDropped` makes the error a cut
 * connection shows (the public `ConnectionDropped`, passed in so that this module does not import
 * the one that imports it).
 */
export const makeServer = (config: Config, options: Options, connectionDropped: () => Error): FakeServer => {
  const clock = options.clock ?? ServerClock.system
  // A virtual clock's own sleep by default: a held answer on real time would make a test with a
  // manual clock wait the tool's whole duration.
  const sleep = options.sleep ?? clock.sleep?.bind(clock) ?? defaultSleep
  const seed = config.seed ?? defaults.seed
  const ledger = LedgerRecorder.make()
  const store = makeTaskStore(config.expiry ?? {}, ledger, options.persistence)
  const tools = new Map<string, Tool>(config.tools.map((tool) => [tool.name, tool]))
  const faults = makeFaultSchedule(config.faults ?? [], seededRandom(streamSeed(seed, "faults")))
  const controlPrefix = config.controlPrefix ?? defaults.controlPrefix
  const recordRequests = config.recordRequests ?? true
  const hostGuard = makeHostGuard(config.allowedHosts)
  const envelopeOptions = {
    supportedVersions: config.supportedVersions ?? defaults.supportedVersions,
    validateHeaders: config.validateHeaders ?? true,
  }

  const subscriptions = makeSubscriptions(
    (taskId) => {
      const now = clock.now()
      const found = store.lookup(taskId, now)
      if (found.kind === "unknown") return undefined
      if (found.kind === "expired" && config.expiry?.mode !== "fail") return undefined
      const { record } = found
      const view = observedView(record, found.kind === "expired", now)
      return {
        key: stateKey(record, view, now),
        quietUntil: quietUntil(record, now, expiresAtOf(record)),
        terminal: isTerminal(view.status),
        task: () => detailedTask({ record, view, now, skewMs: config.timestampSkewMs ?? 0 }),
      }
    },
    {
      now: () => clock.now(),
      version: () => store.version(),
      keepAliveMs: options.keepAliveMs ?? optionDefaults.keepAliveMs,
      // A terminal state pushed is reported as surely as one a poll answered.
      sent: (taskId, task, terminal) => {
        const entry = ledger.taskEntry(taskId)
        if (!terminal || entry === undefined || entry.terminalSeenAt !== null) return
        entry.terminalSeenAt = clock.now()
        entry.terminalStatus = String(task.status)
        entry.terminalSeenBy = "notifications/tasks"
      },
    },
  )

  const context: ServerContext = {
    config,
    clock,
    ledger,
    store,
    tools,
    shapeRandom: seededRandom(streamSeed(seed, "shape")),
    outcomeRandom: seededRandom(streamSeed(seed, "outcome")),
    rateLimiter: makeRateLimiter(),
    subscriptions,
    newTaskId: options.newTaskId ?? (() => crypto.randomUUID()),
  }

  // 2025-11-25 mode: the same handlers behind that revision's edge (sessions, its shapes).
  const generation = config.generation ?? "2026-07-28"
  const legacy = generation === "2026-07-28" ? undefined : Edge2025.make(context, dispatch)
  /** Aborted by a restart or `close()`: held answers die with the process that held them. */
  let lifetime = new AbortController()

  let timer: ReturnType<typeof setInterval> | undefined
  const notifyEveryMs = options.notifyEveryMs ?? optionDefaults.notifyEveryMs
  const notify = () => {
    subscriptions.poke()
    if (subscriptions.size === 0 && timer !== undefined) {
      clearInterval(timer)
      timer = undefined
    }
  }
  const ensureTimer = () => {
    if (timer !== undefined || notifyEveryMs <= 0 || subscriptions.size === 0) return
    timer = setInterval(notify, notifyEveryMs)
    // A forgotten listen stream must not keep a test process alive.
    if (typeof timer === "object" && timer !== null && "unref" in timer) timer.unref()
  }

  const restart = (): Ledger.Restart => {
    subscriptions.closeAll()
    legacy?.restart()
    lifetime.abort()
    lifetime = new AbortController()
    const now = clock.now()
    const lost = store.restart()
    for (const taskId of lost) {
      const entry = ledger.taskEntry(taskId)
      if (entry !== undefined) entry.lostAt = now
    }
    const entry: Ledger.Restart = { at: now, durable: options.persistence !== undefined, lostTaskIds: lost }
    ledger.recordRestart(entry)
    return entry
  }

  const control = async (request: Request, path: string): Promise<Response> => {
    if (path === "ledger" && request.method === "GET") return Response.json(ledger.snapshot())
    if (path === "ledger" && request.method === "DELETE") {
      ledger.clear()
      return new Response(null, { status: 204 })
    }
    if (path === "restart" && request.method === "POST") return Response.json(restart())
    if (path === "health" && request.method === "GET") return Response.json({ ok: true })
    return new Response("Not Found", { status: 404 })
  }

  const serve = async (request: Request, extra: readonly Fault[] = []): Promise<ServeResult> => {
    const refused = hostGuard(request.headers)
    if (refused !== undefined) return { kind: "response", response: refused }
    const url = new URL(request.url)
    if (url.pathname.startsWith(controlPrefix)) {
      return { kind: "response", response: await control(request, url.pathname.slice(controlPrefix.length)) }
    }
    if (request.method !== "POST") {
      return {
        kind: "response",
        response: new Response("Method Not Allowed", { status: 405, headers: { allow: "POST" } }),
      }
    }
    const startedAt = clock.now()
    const body = await request.text()
    const parsed = parseBody(body)
    const peeked = peek(parsed.ok ? parsed.value : undefined)
    const fired = [...faults.next(peeked), ...extra]
    const label = fired.length === 0 ? null : fired.map(faultLabel).join(",")

    if (fired.some((fault) => fault.kind === "restart")) restart()
    for (const fault of fired) if (fault.kind === "latency" && fault.phase !== "after") await sleep(fault.ms)
    const now = clock.now()
    // Logged when the answer leaves, so that the entry says how long the request was in flight.
    const log = async (entry: LogFields) => {
      for (const fault of fired)
        if (fault.kind === "latency" && fault.phase === "after") await sleep(fault.ms)
      if (!recordRequests) return
      ledger.recordRequest({
        at: now,
        startedAt,
        endedAt: clock.now(),
        method: peeked.method ?? null,
        tool: peeked.tool ?? null,
        taskId: peeked.taskId ?? null,
        idempotencyKey: peeked.idempotencyKey ?? null,
        client: request.headers.get("x-client-id"),
        fault: label,
        ...entry,
      })
    }

    const before = fired.find((fault) => phaseOf(fault) === "before")
    if (before !== undefined) {
      const faulted = faultReply(before, undefined)
      await log(faulted.log)
      return faulted.result
    }

    const globalLimit = config.rateLimit
    const retryAfter =
      globalLimit === undefined ? undefined : context.rateLimiter.take("global", globalLimit, now)
    const first: Handled =
      retryAfter !== undefined
        ? fromHandler(tooManyRequests(retryAfter), null)
        : handle(parsed.ok ? parsed.value : undefined, body, request.headers, now, fired, request.signal)

    const after = fired.find((fault) => phaseOf(fault) === "after")
    const firstLaunch =
      first.kind === "held" ? first.answer.launch : first.kind === "rpc" ? first.launch : undefined
    if (firstLaunch !== undefined && label !== null) firstLaunch.fault = label
    let handled: Exclude<Handled, { kind: "held" }>
    if (first.kind === "held") {
      // The work runs for its duration while the request stays open.
      const cuts = [request.signal, lifetime.signal]
      // A fault on the answer holds it back whole: progress streams only when nothing does.
      const intact =
        after === undefined && !fired.some((fault) => fault.kind === "latency" && fault.phase === "after")
      if (first.progress !== undefined && intact && acceptsEventStream(request.headers)) {
        return { kind: "response", response: progressAnswer(first, first.progress, cuts, log) }
      }
      if (!(await hold(sleep, first.holdMs, cuts))) {
        if (firstLaunch !== undefined) firstLaunch.responseDelivered = false
        await log(cutLog(request.signal))
        return { kind: "drop" }
      }
      handled = first.answer
    } else {
      handled = first
    }
    const launch = handled.kind === "rpc" ? handled.launch : undefined
    if (after !== undefined && after.kind !== "wrong-shape") {
      // The work is done but its answer never arrives intact: the window the library exists for.
      if (launch !== undefined) launch.responseDelivered = false
      const faulted = faultReply(after, handled)
      notify()
      await log(faulted.log)
      return faulted.result
    }
    const reply = toResponse(handled, after?.kind === "wrong-shape" ? after : undefined)
    notify()
    await log(reply.log)
    ensureTimer()
    return { kind: "response", response: reply.response }
  }

  /** The held answer as an event stream: progress on the way, the answer when the work is done. */
  const progressAnswer = (
    held: Extract<Handled, { kind: "held" }>,
    progress: NonNullable<Held["progress"]>,
    cuts: readonly AbortSignal[],
    log: (entry: LogFields) => Promise<void>,
  ): Response => {
    const stream = progressStream({
      token: progress.token,
      progress: progress.schedule,
      holdMs: held.holdMs,
      final: held.answer.message,
      wait: (ms, cut) => hold(sleep, ms, [cut, ...cuts]),
      onEnd: (delivered) => {
        if (!delivered && held.answer.launch !== undefined) held.answer.launch.responseDelivered = false
        notify()
        void log(delivered ? { httpStatus: 200, outcome: "stream", errorCode: null } : cutLog(cuts[0]))
      },
    })
    return new Response(stream, { status: 200, headers: eventStreamHeaders })
  }

  const handle = (
    message: unknown,
    body: string,
    headers: Headers,
    now: number,
    fired: readonly Fault[],
    signal: AbortSignal | undefined,
  ): Handled => {
    const era = eraOf(message, headers)
    if (legacy !== undefined && (generation === "2025-11-25" || era === "2025-11-25")) {
      let skewMs = config.timestampSkewMs ?? 0
      for (const fault of fired) if (fault.kind === "skew") skewMs += fault.ms
      const answered = legacy.handle(body, headers, { now, skewMs, signal })
      return answered.kind === "accepted" ? answered : fromHandler(answered.handled, answered.id)
    }
    const envelope =
      era === "2025-11-25" && isObject(message)
        ? refuseLegacy(message, headers, envelopeOptions.supportedVersions)
        : decodeEnvelope({ body, headers }, envelopeOptions)
    if (envelope.kind === "rejected")
      return fromHandler({ kind: "failure", failure: envelope.failure }, envelope.id)
    if (envelope.kind === "notification") return { kind: "accepted" }
    const mismatch = envelopeOptions.validateHeaders
      ? paramHeaderMismatch(envelope.request, headers)
      : undefined
    if (mismatch !== undefined)
      return fromHandler({ kind: "failure", failure: mismatch }, envelope.request.id)
    let skewMs = config.timestampSkewMs ?? 0
    for (const fault of fired) if (fault.kind === "skew") skewMs += fault.ms
    return fromHandler(
      dispatch(context, { request: envelope.request, now, skewMs, signal }),
      envelope.request.id,
    )
  }

  /** SEP-2243: a `tools/call`'s `Mcp-Param-*` headers must agree with its arguments. */
  const paramHeaderMismatch = (request: EnvelopedRequest, headers: Headers) => {
    if (request.method !== "tools/call" || typeof request.params.name !== "string") return undefined
    const tool = tools.get(request.params.name)
    return tool === undefined ? undefined : checkParamHeaders(tool, request.params.arguments, headers)
  }

  const faultReply = (
    fault: Fault,
    handled: Handled | undefined,
  ): { result: ServeResult; log: LogFields } => {
    switch (fault.kind) {
      case "drop":
        return { result: { kind: "drop" }, log: { httpStatus: 0, outcome: "dropped", errorCode: null } }
      case "status": {
        const headers: Record<string, string> = { "content-type": "text/plain" }
        if (fault.retryAfter !== undefined) headers["retry-after"] = String(fault.retryAfter)
        return {
          result: {
            kind: "response",
            response: new Response(fault.body ?? statusText(fault.status), { status: fault.status, headers }),
          },
          log: { httpStatus: fault.status, outcome: "error", errorCode: null },
        }
      }
      case "malformed-json": {
        const id = handled?.kind === "rpc" ? handled.id : null
        // A response cut off mid-object: valid HTTP, invalid JSON.
        return {
          result: {
            kind: "response",
            response: new Response(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"resultType":`, {
              status: 200,
              headers: { "content-type": "application/json" },
            }),
          },
          log: { httpStatus: 200, outcome: "malformed", errorCode: null },
        }
      }
      default:
        throw new Error(`fake-server: fault ${fault.kind} has no reply of its own`)
    }
  }

  const handler = async (request: Request, extra?: readonly Fault[]): Promise<Response> => {
    const served = await serve(request, extra)
    if (served.kind === "response") return served.response
    // The caller gave up (its timeout, say): `fetch` rejects with the abort's reason.
    if (request.signal.aborted) throw request.signal.reason
    if (options.dropStyle === "throw") throw connectionDropped()
    const broken = new ReadableStream<Uint8Array>({
      start: (controller) => controller.error(connectionDropped()),
    })
    return new Response(broken, { status: 200, headers: { "content-type": "application/json" } })
  }

  return {
    handler,
    serve,
    ledger,
    config,
    restart,
    notify,
    taskIds: () => store.ids(),
    close: () => {
      subscriptions.closeAll()
      lifetime.abort()
      if (timer !== undefined) clearInterval(timer)
      timer = undefined
    },
    openStreams: () => subscriptions.size,
    dropStreams: () => subscriptions.closeAll(),
    muteStreams: () => subscriptions.muteAll(),
  }
}
