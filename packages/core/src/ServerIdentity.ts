/**
 * A row names its server by a stable identity: a hash of the configured name and the normalised
 * URL, never of headers or credentials. The name part is what a row keeps: a client that
 * configures the same name at another URL drives the row there (the app moved its server), and
 * `HandleStore.rebind` moves rows to another name outright.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Json from "./Json.js"
import type { ServerEndpoint } from "./Wire.js"

/**
 * A server URL that cannot name a server: not a URL, not HTTP(S), or holding credentials.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidServerUrl extends Schema.TaggedError<InvalidServerUrl>()("InvalidServerUrl", {
  url: Schema.String,
  reason: Schema.String,
}) {
  override get message(): string {
    return `invalid server URL ${this.url}: ${this.reason}`
  }
}

/**
 * Lower-cased scheme and host, default port dropped, no fragment, no trailing slash on the path,
 * query kept (it can select a server). Credentials in the URL are refused: they would end up in
 * the identity and in logs.
 *
 * @since 0.1.0
 * @category constructors
 */
export const normaliseUrl = (raw: string): Effect.Effect<string, InvalidServerUrl> =>
  Effect.suspend(() => {
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      return Effect.fail(new InvalidServerUrl({ url: raw, reason: "not a URL" }))
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      return Effect.fail(new InvalidServerUrl({ url: raw, reason: `unsupported scheme ${url.protocol}` }))
    }
    if (url.username !== "" || url.password !== "") {
      return Effect.fail(
        new InvalidServerUrl({
          url: url.host,
          reason: "credentials in the URL; pass them as headers instead",
        }),
      )
    }
    url.hash = ""
    const path = url.pathname.replace(/\/+$/, "")
    return Effect.succeed(`${url.protocol}//${url.host}${path}${url.search}`)
  })

/**
 * The identity rows record for a server: its name and a hash of its normalised URL.
 *
 * @since 0.1.0
 * @category constructors
 */
export const of = (server: ServerEndpoint): Effect.Effect<string, InvalidServerUrl> =>
  Effect.flatMap(normaliseUrl(server.url), (url) =>
    Json.hash({ name: server.name, url }).pipe(
      Effect.map((digest) => `${server.name}:${digest.slice(0, 16)}`),
    ),
  )

/**
 * The name part of an identity (what `of` put before the hash); the identity itself when it has
 * no hash part.
 *
 * @since 0.3.0
 * @category constructors
 */
export const nameOf = (id: string): string => id.replace(/:[0-9a-f]{16}$/, "")

const secretName =
  /^(access[_-]?token|id[_-]?token|refresh[_-]?token|token|auth|authorization|bearer|jwt|api[_-]?key|apikey|key|secret|client[_-]?secret|password|passwd|pwd|sig|signature|x-amz-signature|session|session[_-]?id|sid|code|credentials?)$/i
const secretWord = /(token|secret|passw|api[_-]?key|signature|credential)/i

/**
 * The query parameters of `url` whose names look like secrets (`token`, `api_key`, ...): such a
 * URL is never written to a store's servers table. Empty when there are none or it is no URL.
 *
 * @since 0.3.0
 * @category predicates
 */
export const secretQueryParams = (url: string): ReadonlyArray<string> => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return []
  }
  const names = new Set<string>()
  parsed.searchParams.forEach((_value, name) => {
    if (secretName.test(name) || secretWord.test(name)) names.add(name)
  })
  return [...names]
}
