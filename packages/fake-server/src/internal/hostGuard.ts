/**
 * DNS-rebinding protection. A page on `evil.example.com` whose name an attacker re-points at
 * 127.0.0.1 makes the browser send requests to a local server with `Host: evil.example.com` (and
 * an `Origin` naming that site): a local server must check both and refuse what is not its own
 * name, as the MCP transport's security warning and the conformance suite's
 * `dns-rebinding-protection` scenario ask (HTTP 403, as the official SDK answers).
 *
 * Only headers that are present are judged: a request handed to the web-standard handler
 * in process (as `fetch`, through msw) carries no `Host` and no `Origin`, and nothing to rebind.
 */
import { defaults } from "../Config.js"

/** The host name of a `Host` header value (`name`, `name:port`, `[v6]`, `[v6]:port`), lowercased. */
const hostName = (value: string): string => {
  const trimmed = value.trim().toLowerCase()
  if (trimmed.startsWith("[")) {
    const end = trimmed.indexOf("]")
    return end === -1 ? trimmed : trimmed.slice(0, end + 1)
  }
  const colon = trimmed.indexOf(":")
  return colon === -1 ? trimmed : trimmed.slice(0, colon)
}

/** The host name an `Origin` names, or `undefined` for `null` and anything unreadable. */
const originHost = (value: string): string | undefined => {
  try {
    return new URL(value.trim()).hostname.toLowerCase()
  } catch {
    return undefined
  }
}

/** `[::1]` and `::1` are one name; WHATWG URLs write IPv6 hosts in brackets. */
const normalise = (name: string): string => (name.includes(":") && !name.startsWith("[") ? `[${name}]` : name)

/**
 * A checker for `allowedHosts` (default: the loopback names): the `Response` to answer with when
 * the request's `Host` or `Origin` names another host, `undefined` when it may proceed.
 */
export const makeHostGuard = (
  allowedHosts: readonly string[] | undefined,
): ((headers: Headers) => Response | undefined) => {
  const allowed = new Set(
    (allowedHosts ?? defaults.allowedHosts).map((name) => normalise(name.toLowerCase())),
  )
  if (allowed.has("*")) return () => undefined
  const refuse = (what: string, value: string) =>
    new Response(
      JSON.stringify({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32000, message: `Forbidden: invalid ${what} header ${JSON.stringify(value)}` },
      }),
      { status: 403, headers: { "content-type": "application/json" } },
    )
  return (headers) => {
    const host = headers.get("host")
    if (host !== null && !allowed.has(normalise(hostName(host)))) return refuse("Host", host)
    const origin = headers.get("origin")
    if (origin !== null) {
      const name = originHost(origin)
      if (name === undefined || !allowed.has(normalise(name))) return refuse("Origin", origin)
    }
    return undefined
  }
}
