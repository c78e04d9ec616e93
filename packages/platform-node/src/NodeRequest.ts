/**
 * The wire's requests over `node:http` / `node:https`, for Node: one keep-alive agent per origin
 * and the answer read straight from the socket's buffers, without the WHATWG `Request`,
 * `Response`, `Headers` and stream objects that Node's fetch builds around each request. What
 * the wire hands back to its SDK path (an event stream, a redirect) becomes a fetch `Response`
 * then, and only then.
 *
 * ```ts
 * import * as HttpWire from "@mcp-handles/core/HttpWire"
 * import { NodeRequest } from "@mcp-handles/platform-node"
 *
 * const wire = HttpWire.layer({ request: NodeRequest.make() })
 * ```
 *
 * Moved here from `@mcp-handles/client` (which still exports it as `nodeRequest`), so that an
 * app on core's Effect API has it without the client's bundled copy of Effect.
 *
 * @since 0.6.0
 */
import * as http from "node:http"
import * as https from "node:https"
import { Readable } from "node:stream"
import * as HttpWire from "@mcp-handles/core/HttpWire"

/**
 * What `make` takes.
 *
 * @since 0.6.0
 * @category models
 */
export interface Options {
  /** Sockets per origin at most (default: unlimited, as fetch has). */
  readonly maxSockets?: number | undefined
}

const lookupOf = (headers: http.IncomingHttpHeaders): HttpWire.HeaderLookup => ({
  get: (name) => {
    const value = headers[name]
    return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value
  },
})

const mediaType = (value: string | undefined): string | undefined =>
  value === undefined ? undefined : (value.split(";")[0] ?? "").trim().toLowerCase()

/** A redirect, or a 2xx event stream: the wire's SDK path reads those. */
const passes = (status: number, contentType: string | undefined): boolean =>
  (status >= 300 && status < 400) || (status >= 200 && status < 300 && contentType === "text/event-stream")

/** A fetch `Response` of an answer not yet read (statuses fetch cannot make are not passed). */
const responseOf = (answer: http.IncomingMessage, status: number): Response => {
  const headers = new Headers()
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined) continue
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one)
  }
  return new Response(Readable.toWeb(answer) as ReadableStream<Uint8Array>, {
    status,
    statusText: answer.statusMessage ?? "",
    headers,
  })
}

interface Target {
  readonly module: typeof http | typeof https
  readonly agent: http.Agent
  readonly options: http.RequestOptions
}

/**
 * A request function for the wire (`HttpWire.Options.request`; `@mcp-handles/client` uses it
 * by default) over `node:http` and `node:https`: the same semantics as fetch for what the wire reads
 * (status, headers, the body as UTF-8 text up to the size limit, errors with their codes,
 * aborting), on keep-alive connections pooled per origin.
 *
 * @since 0.6.0
 * @category constructors
 */
export const make = (options: Options = {}): HttpWire.Request => {
  const agents = new Map<string, http.Agent>()
  // An endpoint's URL is asked on every poll: parsed once.
  const targets = new Map<string, Target>()
  const targetOf = (url: string): Target => {
    const known = targets.get(url)
    if (known !== undefined) return known
    const parsed = new URL(url)
    const secure = parsed.protocol === "https:"
    if (!secure && parsed.protocol !== "http:") {
      throw Object.assign(new TypeError(`unsupported protocol ${parsed.protocol}`), {
        code: "ERR_INVALID_URL",
      })
    }
    let agent = agents.get(parsed.origin)
    if (agent === undefined) {
      const settings = {
        keepAlive: true,
        scheduling: "lifo" as const,
        maxSockets: options.maxSockets ?? Infinity,
      }
      agent = secure ? new https.Agent(settings) : new http.Agent(settings)
      agents.set(parsed.origin, agent)
    }
    const target: Target = {
      module: secure ? https : http,
      agent,
      options: {
        hostname: parsed.hostname.startsWith("[") ? parsed.hostname.slice(1, -1) : parsed.hostname,
        port: parsed.port === "" ? (secure ? 443 : 80) : Number(parsed.port),
        path: `${parsed.pathname}${parsed.search}`,
        method: "POST",
        agent,
        ...(parsed.username === "" && parsed.password === ""
          ? {}
          : { auth: `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}` }),
      },
    }
    if (targets.size > 1000) targets.clear()
    targets.set(url, target)
    return target
  }

  return (input, done) => {
    let settled = false
    const finish = (outcome: HttpWire.RequestOutcome) => {
      if (settled) return
      settled = true
      done(outcome)
    }
    let target: Target
    try {
      target = targetOf(input.url)
    } catch (error) {
      finish({ _tag: "Failed", error })
      return () => {}
    }
    const body = Buffer.from(input.body, "utf8")
    const request = target.module.request({
      ...target.options,
      headers: { ...input.headers, "content-length": String(body.byteLength) },
    })
    // Once a response began, a failure is one of reading its body.
    let answering: { readonly status: number; readonly headers: HttpWire.HeaderLookup } | undefined
    request.on("response", (answer) => {
      const status = answer.statusCode ?? 0
      const headers = lookupOf(answer.headers)
      answering = { status, headers }
      const contentType = mediaType(answer.headers["content-type"])
      if (passes(status, contentType)) {
        finish({ _tag: "Passed", response: responseOf(answer, status) })
        return
      }
      const chunks: Array<Buffer> = []
      let total = 0
      answer.on("data", (chunk: Buffer) => {
        if (settled) return
        total += chunk.byteLength
        if (total > input.maxBytes) {
          chunks.push(chunk)
          const prefix = Buffer.concat(chunks).subarray(0, HttpWire.oversizePrefixBytes).toString("utf8")
          // A peer that keeps writing must not hold the connection: it is not reused.
          request.destroy()
          finish({ _tag: "Answered", status, headers, oversizePrefix: prefix })
          return
        }
        chunks.push(chunk)
      })
      answer.on("end", () => {
        finish({
          _tag: "Answered",
          status,
          headers,
          text: (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString("utf8"),
        })
      })
      // The connection dropped mid-answer ("aborted", ECONNRESET).
      answer.on("error", (error) => finish({ _tag: "Answered", status, headers, bodyError: error }))
      answer.on("close", () => {
        if (!answer.complete)
          finish({
            _tag: "Answered",
            status,
            headers,
            bodyError: Object.assign(new Error("the connection closed before the answer ended"), {
              code: "ECONNRESET",
            }),
          })
      })
    })
    request.on("error", (error) =>
      finish(
        answering === undefined
          ? { _tag: "Failed", error }
          : { _tag: "Answered", ...answering, bodyError: error },
      ),
    )
    request.end(body)
    return () => {
      settled = true
      request.destroy()
    }
  }
}
