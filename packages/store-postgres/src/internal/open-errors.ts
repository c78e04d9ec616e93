/**
 * How a PostgreSQL store that cannot be opened says so: where the database is
 * (`host:port/database`, never a user or password) and why, in one line, from the driver's
 * error. The one place that phrases a driver error for people: the store's `OpenError`s and
 * the CLI's messages both read it.
 *
 * @internal
 */

import { SqlError } from "@effect/sql/SqlError"
import type { PgClientConfig } from "@effect/sql-pg/PgClient"
import * as SqlStore from "@mcp-handles/core/SqlStore"
import * as Redacted from "effect/Redacted"

/** The words for the network failures a connection meets, by Node's code. */
const networkWords: Readonly<Record<string, string>> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ENOTFOUND: "no such host",
  EAI_AGAIN: "the host name could not be looked up",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  EPIPE: "connection closed",
}

interface Described {
  readonly message: string
  readonly code: string | undefined
}

/** The innermost error's words and code: an `AggregateError` (every address of a host) by its first. */
const innermost = (error: unknown): Described => {
  if (typeof error !== "object" || error === null) return { message: String(error ?? ""), code: undefined }
  const fields = error as { readonly message?: unknown; readonly code?: unknown; readonly errors?: unknown }
  const code = typeof fields.code === "string" && fields.code !== "" ? fields.code : undefined
  const message = typeof fields.message === "string" ? fields.message : ""
  if (message === "" && Array.isArray(fields.errors) && fields.errors.length > 0) {
    const first = innermost(fields.errors[0])
    return { message: first.message, code: code ?? first.code }
  }
  return { message, code }
}

/**
 * A driver error as one line for people: `connection refused (ECONNREFUSED)`,
 * `database "x" does not exist (3D000)`, `password authentication failed for user "u" (28P01)`.
 * `secret` (a password), wherever it appears, reads `***`.
 */
export const describeCause = (error: unknown, secret?: string): string => {
  const inner = innermost(error instanceof SqlError ? error.cause : error)
  const words = inner.code === undefined ? undefined : networkWords[inner.code]
  const text =
    words !== undefined
      ? `${words} (${inner.code})`
      : inner.message !== ""
        ? inner.code === undefined
          ? inner.message
          : `${inner.message} (${inner.code})`
        : error instanceof SqlError
          ? error.message.replace(/^PgClient: /, "")
          : String(error)
  const line = text.replace(/\s*\n\s*/g, " ").trim()
  return secret === undefined || secret === "" ? line : line.replaceAll(secret, "***")
}

const fromUrl = (url: string): string | undefined => {
  try {
    const parsed = new URL(url)
    const database = decodeURIComponent(parsed.pathname.replace(/^\//, ""))
    return `${parsed.hostname || "localhost"}:${parsed.port || "5432"}/${database || "postgres"}`
  } catch {
    return undefined
  }
}

/** Where the database of `config` is: `host:port/database`, with the driver's defaults. */
export const placeOf = (config: PgClientConfig): string => {
  const url = config.url === undefined ? undefined : fromUrl(Redacted.value(config.url))
  if (url !== undefined) return url
  const database = config.database ?? config.username ?? "postgres"
  return `${config.host ?? "localhost"}:${config.port ?? 5432}/${database}`
}

/** The password of `config`, to keep out of every message. */
export const secretOf = (config: PgClientConfig): string | undefined => {
  if (config.password !== undefined) return Redacted.value(config.password)
  if (config.url === undefined) return undefined
  try {
    const password = new URL(Redacted.value(config.url)).password
    return password === "" ? undefined : decodeURIComponent(password)
  } catch {
    return undefined
  }
}

/** The store at `place` could not be opened for `problem`. */
export const openError = (
  place: string,
  reason: SqlStore.OpenErrorReason,
  problem: string,
  extra: { readonly cause?: unknown; readonly found?: number; readonly supported?: number } = {},
): SqlStore.OpenError =>
  SqlStore.openError({ store: "PostgreSQL", location: place, reason, problem, ...extra })
