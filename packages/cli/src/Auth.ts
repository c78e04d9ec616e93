/**
 * Credentials for servers: request headers given on the command line (`--header 'Name: value'`)
 * or read from an environment variable (`--header-env 'Name=VAR'`). They live in this process's
 * memory only: never in the store, the server list, an output or an error message. A URL that
 * carries a secret in its query string is refused, because the URL is part of the server's
 * identity and is written to the store.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import { type CliError, usage } from "./CliError.js"
import * as Spec from "./Spec.js"

/**
 * Headers to send, by lower-cased name.
 *
 * @since 0.2.0
 * @category models
 */
export type Headers = Readonly<Record<string, string>>

/**
 * @since 0.2.0
 * @category options
 */
export const header = Spec.repeated(
  Spec.text("header", {
    placeholder: "'NAME: VALUE'",
    description:
      "send this request header to the server. Visible in your shell history and to ps; prefer --header-env for secrets",
    example: "--header 'X-Tenant: acme'",
  }),
)

/**
 * @since 0.2.0
 * @category options
 */
export const headerEnv = Spec.repeated(
  Spec.text("header-env", {
    placeholder: "NAME=VAR",
    description:
      "send request header NAME with the value of environment variable VAR; the value is never written anywhere",
    example: "--header-env 'Authorization=MCP_TOKEN'",
  }),
)

/**
 * @since 0.2.0
 * @category options
 */
export const options = { header, headerEnv }

/** RFC 9110 field names. */
const token = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/**
 * The headers the options name. Values are checked for line breaks (a header value cannot hold
 * one), and an unset or empty variable is an error that names the variable, never a value.
 *
 * @since 0.2.0
 * @category constructors
 */
export const fromOptions = (
  given: { readonly header: ReadonlyArray<string>; readonly headerEnv: ReadonlyArray<string> },
  env: NodeJS.ProcessEnv = process.env,
): Effect.Effect<Headers, CliError> =>
  Effect.gen(function* () {
    const headers: Record<string, string> = {}
    const add = (name: string, value: string, option: string) => {
      if (!token.test(name))
        return Effect.fail(usage(`${option}: ${JSON.stringify(name)} is not a header name`))
      if (/[\r\n\0]/.test(value)) return Effect.fail(usage(`${option} ${name}: the value holds a line break`))
      headers[name.toLowerCase()] = value
      return Effect.void
    }
    for (const raw of given.header) {
      const colon = raw.indexOf(":")
      if (colon <= 0) return yield* usage(`--header: expected 'NAME: VALUE', got a value without a colon`)
      yield* add(raw.slice(0, colon).trim(), raw.slice(colon + 1).trim(), "--header")
    }
    for (const raw of given.headerEnv) {
      const equals = raw.indexOf("=")
      if (equals <= 0) return yield* usage(`--header-env: expected NAME=VAR, got ${JSON.stringify(raw)}`)
      const name = raw.slice(0, equals).trim()
      const variable = raw.slice(equals + 1).trim()
      const value = env[variable]
      if (value === undefined || value === "") {
        return yield* usage(`--header-env ${name}: environment variable ${variable} is not set`)
      }
      yield* add(name, value, "--header-env")
    }
    return headers
  })

/** Query parameter names that hold credentials in the wild. */
const secretName =
  /^(access[_-]?token|id[_-]?token|refresh[_-]?token|token|auth|authorization|bearer|jwt|api[_-]?key|apikey|key|secret|client[_-]?secret|password|passwd|pwd|sig|signature|x-amz-signature|session|session[_-]?id|sid|code|credentials?)$/i
/** Names that merely contain such a word: `my_token`, `x-api-key`. */
const secretWord = /(token|secret|passw|api[_-]?key|signature|credential)/i

/**
 * The query parameters of `url` that look like secrets; empty when there are none (or it is
 * not a URL: the identity rules say so better).
 *
 * @since 0.2.0
 */
export const secretParams = (url: string): ReadonlyArray<string> => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return []
  }
  return [...new Set([...parsed.searchParams.keys()].filter((n) => secretName.test(n) || secretWord.test(n)))]
}

/**
 * `url` without its query values: safe to print.
 *
 * @since 0.2.0
 */
export const redactQuery = (url: string): string => {
  try {
    const parsed = new URL(url)
    for (const name of [...parsed.searchParams.keys()]) parsed.searchParams.set(name, "***")
    if (parsed.username !== "") parsed.username = "***"
    if (parsed.password !== "") parsed.password = "***"
    return parsed.toString()
  } catch {
    return url.replace(/\?.*$/, "?…")
  }
}

/**
 * Refuses a server URL that carries credentials: in its user info, or in its query string.
 *
 * @since 0.2.0
 */
export const checkUrl = (url: string): Effect.Effect<void, CliError> => {
  const secrets = secretParams(url)
  if (secrets.length > 0) {
    return Effect.fail(
      usage(
        `the server URL ${redactQuery(url)} carries a secret in its query string (${secrets.join(", ")}); it would be stored with every call. Pass it as a header instead, e.g. --header-env 'Authorization=MCP_TOKEN'`,
      ),
    )
  }
  try {
    const parsed = new URL(url)
    if (parsed.username !== "" || parsed.password !== "") {
      return Effect.fail(
        usage(
          `the server URL ${redactQuery(url)} carries credentials; pass them as a header instead, e.g. --header-env 'Authorization=MCP_TOKEN'`,
        ),
      )
    }
  } catch {
    // Not a URL: the identity rules report it.
  }
  return Effect.void
}
