/**
 * Where handles live, as the user names it: `sqlite:PATH`, a bare path (SQLite), or a
 * `postgres://` URL. Resolved from `--store`, then `MCP_HANDLES_STORE`, then the default
 * `./.mcp-handles/tasks.db`.
 */
import { mkdirSync } from "node:fs"
import { dirname, resolve } from "node:path"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type CliError, describe, usage } from "./CliError.js"

export const defaultPath = "./.mcp-handles/tasks.db"
export const environmentVariable = "MCP_HANDLES_STORE"

export type StoreSpec =
  | { readonly _tag: "Sqlite"; readonly filename: string; readonly isDefault: boolean }
  | { readonly _tag: "Postgres"; readonly url: string }

export const parse = (raw: Option.Option<string>): Effect.Effect<StoreSpec, CliError> =>
  Effect.suspend((): Effect.Effect<StoreSpec, CliError> => {
    const given = Option.getOrUndefined(raw) ?? process.env[environmentVariable]
    if (given === undefined || given === "") {
      return Effect.succeed({ _tag: "Sqlite", filename: resolve(defaultPath), isDefault: true } as const)
    }
    if (given.startsWith("postgres://") || given.startsWith("postgresql://")) {
      try {
        new URL(given)
      } catch {
        return Effect.fail(usage(`--store: not a valid PostgreSQL URL: ${redactUrl(given)}`))
      }
      return Effect.succeed({ _tag: "Postgres", url: given } as const)
    }
    const path = given.startsWith("sqlite:") ? given.slice("sqlite:".length) : given
    if (path === "" || /^[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
      return Effect.fail(usage(`--store: expected sqlite:PATH or postgres://..., got ${redactUrl(given)}`))
    }
    return Effect.succeed({ _tag: "Sqlite", filename: resolve(path), isDefault: false } as const)
  })

/** A URL with its password hidden, for messages. */
export const redactUrl = (raw: string): string => {
  try {
    const url = new URL(raw)
    if (url.password !== "") url.password = "***"
    return url.toString()
  } catch {
    return raw.replace(/:[^:@/]*@/, ":***@")
  }
}

export const describeSpec = (spec: StoreSpec): string =>
  spec._tag === "Sqlite" ? `sqlite:${spec.filename}` : redactUrl(spec.url)

/**
 * The store layer. Opening failures (a file that is not a database, a refused connection, wrong
 * credentials) become one `CliError` line. The default directory is created on first use; an
 * explicit path must be in a directory that exists, so a typo is reported rather than created.
 */
export const layer = (spec: StoreSpec): Layer.Layer<HandleStore.HandleStore, CliError> => {
  if (spec._tag === "Sqlite") {
    const open = Layer.unwrapEffect(
      Effect.sync(() => {
        if (spec.isDefault) mkdirSync(dirname(spec.filename), { recursive: true, mode: 0o700 })
        return SqliteStore.layer({ filename: spec.filename })
      }),
    )
    return Layer.mapError(open, describe)
  }
  // PostgreSQL's driver is loaded only when asked for: every SQLite command starts faster.
  return Layer.unwrapEffect(
    Effect.promise(() => import("./PgStoreLayer.js")).pipe(Effect.map((module) => module.layer(spec.url))),
  )
}
