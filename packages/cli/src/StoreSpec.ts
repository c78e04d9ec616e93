/**
 * Where calls are kept, as the user names it: `sqlite:PATH`, a path to a SQLite file, or a
 * `postgres://` URL. Resolved from `--store`, then `MCP_HANDLES_STORE`, then the default
 * `./.mcp-handles/tasks.db`.
 *
 * Reading never creates a store: `list`, `show`, `resume`, `gc` and the rest fail on a missing
 * one and name where they looked, so an operator in the wrong directory is told so instead of
 * seeing an empty store. Only `call` creates one.
 *
 * @since 0.1.0
 */
import { existsSync, mkdirSync } from "node:fs"
import { dirname, resolve } from "node:path"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type CliError, failed, fromKnown, usage } from "./CliError.js"

/**
 * @since 0.1.0
 * @category constants
 */
export const defaultPath = "./.mcp-handles/tasks.db"

/**
 * @since 0.1.0
 * @category constants
 */
export const environmentVariable = "MCP_HANDLES_STORE"

/**
 * @since 0.1.0
 * @category models
 */
export type StoreSpec =
  | { readonly _tag: "Sqlite"; readonly filename: string; readonly isDefault: boolean }
  | { readonly _tag: "Postgres"; readonly url: string }

/**
 * `read` opens an existing store and fails on a missing one; `create` makes it when missing.
 *
 * @since 0.2.0
 * @category models
 */
export type Mode = "read" | "create"

/**
 * @since 0.1.0
 * @category constructors
 */
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
    const explicit = given.startsWith("sqlite:")
    const path = explicit ? given.slice("sqlite:".length) : given
    if (path === "" || /^[a-z][a-z0-9+.-]+:/i.test(path)) {
      return Effect.fail(usage(`--store: expected sqlite:PATH or postgres://..., got ${redactUrl(given)}`))
    }
    // A bare word is more likely a mistyped store than a file name: ask for the prefix.
    if (!explicit && !/[./\\]/.test(path)) {
      return Effect.fail(
        usage(
          `--store: expected sqlite:PATH, a path like ./${path}.db, or postgres://...; got ${JSON.stringify(given)} (for a SQLite file of that name, write sqlite:${path})`,
        ),
      )
    }
    return Effect.succeed({ _tag: "Sqlite", filename: resolve(path), isDefault: false } as const)
  })

/**
 * A URL with its password hidden, for messages.
 *
 * @since 0.1.0
 */
export const redactUrl = (raw: string): string => {
  try {
    const url = new URL(raw)
    if (url.password !== "") url.password = "***"
    return url.toString()
  } catch {
    return raw.replace(/:[^:@/]*@/, ":***@")
  }
}

/**
 * @since 0.1.0
 */
export const describeSpec = (spec: StoreSpec): string =>
  spec._tag === "Sqlite" ? `sqlite:${spec.filename}` : redactUrl(spec.url)

/**
 * The message for a store that is not there, naming where the command looked.
 *
 * @since 0.2.0
 */
export const missing = (where: string): CliError =>
  failed(
    `no store at ${where}: nothing was called with it yet (only mcp-handles call creates a store). Pass --store, or set $${environmentVariable}, to point at yours`,
  )

/**
 * The store layer. Opening failures (a file that is not a database, a refused connection, wrong
 * credentials) become one `CliError` line. In `create` mode the default directory is created;
 * an explicit path must be in a directory that exists, so a typo is reported rather than
 * created.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (spec: StoreSpec, mode: Mode): Layer.Layer<HandleStore.HandleStore, CliError> => {
  if (spec._tag === "Sqlite") {
    const open = Layer.unwrapEffect(
      Effect.suspend(() => {
        if (mode === "read" && !existsSync(spec.filename)) return Effect.fail(missing(spec.filename))
        if (mode === "create" && spec.isDefault) {
          mkdirSync(dirname(spec.filename), { recursive: true, mode: 0o700 })
        }
        return Effect.succeed(Layer.mapError(SqliteStore.layer({ filename: spec.filename }), fromKnown))
      }),
    )
    return open
  }
  // PostgreSQL's driver is loaded only when asked for: every SQLite command starts faster.
  return Layer.unwrapEffect(
    Effect.promise(() => import("./PgStoreLayer.js")).pipe(
      Effect.map((module) => module.layer(spec.url, mode)),
    ),
  )
}
