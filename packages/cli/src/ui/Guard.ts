/**
 * Who may use `mcp-handles ui`: whoever holds the random token printed with its URL. A browser
 * that opened that URL keeps the token in a cookie (HttpOnly, SameSite=Strict) and the token
 * leaves the address bar. Every request must name this server in `Host` (a page of another site
 * whose name was rebound to 127.0.0.1 sends its own name: DNS rebinding), and every action
 * (POST) must also come from this server's own origin.
 *
 * @since 0.5.0
 */
import { randomBytes, timingSafeEqual } from "node:crypto"

/**
 * @since 0.5.0
 * @category constants
 */
export const cookieName = "mcp_handles_ui"

/**
 * @since 0.5.0
 * @category constructors
 */
export const token = (): string => randomBytes(24).toString("base64url")

/**
 * What a request brings that the guard reads.
 *
 * @since 0.5.0
 * @category models
 */
export interface Request {
  readonly method: string
  readonly host: string | undefined
  readonly origin: string | undefined
  /** `Sec-Fetch-Site`, which browsers send and a page cannot forge. */
  readonly fetchSite: string | undefined
  readonly cookie: string | undefined
  /** The `token` query parameter (only on the first visit, from the printed URL). */
  readonly queryToken: string | undefined
}

/**
 * The guard's answer: go on, go on after setting the cookie (the token came in the URL), or
 * refuse with this status and reason.
 *
 * @since 0.5.0
 * @category models
 */
export type Verdict =
  | { readonly _tag: "Allow" }
  | { readonly _tag: "AllowAndRemember" }
  | { readonly _tag: "Refuse"; readonly status: 401 | 403; readonly reason: string }

const same = (a: string, b: string): boolean => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/**
 * The names this server answers to on `port`: the loopback names, and the host it was told to
 * bind when that is another one.
 *
 * @since 0.5.0
 */
export const allowedHosts = (host: string, port: number): ReadonlySet<string> => {
  const names = new Set(["127.0.0.1", "localhost", "[::1]"])
  names.add(host.includes(":") && !host.startsWith("[") ? `[${host}]` : host)
  return new Set([...names].map((name) => `${name}:${port}`))
}

/**
 * @since 0.5.0
 */
export const check = (request: Request, secret: string, hosts: ReadonlySet<string>): Verdict => {
  const host = request.host?.toLowerCase()
  if (host === undefined || !hosts.has(host)) {
    return { _tag: "Refuse", status: 403, reason: "unknown Host" }
  }
  if (request.method !== "GET" && request.method !== "HEAD") {
    if (request.origin !== `http://${host}`) {
      return { _tag: "Refuse", status: 403, reason: "an action must come from this page (Origin)" }
    }
    if (request.fetchSite !== undefined && request.fetchSite !== "same-origin") {
      return { _tag: "Refuse", status: 403, reason: "an action must come from this page (Sec-Fetch-Site)" }
    }
  }
  if (request.cookie !== undefined && same(request.cookie, secret)) return { _tag: "Allow" }
  // The token in a URL is taken only to set the cookie, on a GET.
  if (request.method === "GET" && request.queryToken !== undefined && same(request.queryToken, secret)) {
    return { _tag: "AllowAndRemember" }
  }
  return {
    _tag: "Refuse",
    status: 401,
    reason: "open the URL mcp-handles ui printed (it carries the token)",
  }
}
