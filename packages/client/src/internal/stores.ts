/**
 * The plain options of `@mcp-handles/client` turned into what core and the stores take: a store
 * layer, and durations decoded (the stores take Effect's duration forms, which `"30s"` is not).
 * Each store is imported when chosen (a chunk of its own in the bundle), so opening on
 * PostgreSQL never loads SQLite's native driver, nor the reverse.
 */

import * as CoreDuration from "@mcp-handles/core/DurationInput"
import * as Encryption from "@mcp-handles/core/Encryption"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import type * as HttpWire from "@mcp-handles/core/HttpWire"
import { NodeCipher } from "@mcp-handles/platform-node"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import type { DurationInput } from "../DurationInput.js"
import { nodeRequest } from "../NodeRequest.js"
import type { EncryptionKeys, HttpOptions } from "../OpenOptions.js"
import type { Store } from "../Store.js"

/** A `store` whose `kind` is none of the three (plain JavaScript callers have no type check). */
export class InvalidStore extends Data.TaggedError("InvalidStore")<{ readonly kind: unknown }> {
  override get message(): string {
    return `unknown store kind ${JSON.stringify(this.kind)}: use "sqlite", "postgres" or "memory"`
  }
}

/** Throws `InvalidDuration` (an Error with a `_tag`), as core's facade does for its own durations. */
export const duration = (input: DurationInput | undefined): Duration.Duration | undefined =>
  input === undefined ? undefined : Either.getOrThrowWith(CoreDuration.decodeEither(input), (error) => error)

export const http = (options: HttpOptions): HttpWire.Options => ({
  ...options,
  requestTimeout: duration(options.requestTimeout),
  // Node's own HTTP client unless the caller chose a fetch (an interceptor, a test's server):
  // then that fetch sends everything, as before.
  request: options.request ?? (options.fetch === undefined ? nodeRequest() : undefined),
})

export const layer = async (store: Store): Promise<Layer.Layer<HandleStore.HandleStore, unknown>> => {
  switch (store.kind) {
    case "sqlite": {
      const { kind: _, busyTimeout, commitDelay, ...options } = store
      const decoded = { ...options, busyTimeout: duration(busyTimeout), commitDelay: duration(commitDelay) }
      const { SqliteStore } = await import("@mcp-handles/store-sqlite")
      return SqliteStore.layer(decoded)
    }
    case "postgres": {
      const { kind: _, url, retry, instanceLockCheck, connectTimeout, ...options } = store
      const decoded = {
        ...options,
        instanceLockCheck: duration(instanceLockCheck),
        connectTimeout: duration(connectTimeout),
        retry:
          retry === undefined
            ? undefined
            : {
                budget: duration(retry.budget),
                baseDelay: duration(retry.baseDelay),
                maxDelay: duration(retry.maxDelay),
              },
      }
      const { PgStore } = await import("@mcp-handles/store-postgres")
      return PgStore.layerUrl(url, decoded)
    }
    case "memory": {
      const { MemoryStore } = await import("@mcp-handles/store-memory")
      return MemoryStore.layer
    }
    default:
      throw new InvalidStore({ kind: (store as { readonly kind?: unknown }).kind })
  }
}

/**
 * The key provider of `encryption` (the file is read here, on the Node side, never by core),
 * with `node:crypto` as the cipher: WebCrypto's thread-pool round trip per value would be most
 * of an encrypted write's cost.
 */
export const encryption = (keys: EncryptionKeys): Layer.Layer<Encryption.KeyProvider> =>
  Layer.merge(
    "keyEnv" in keys
      ? Encryption.layerEnv(keys.keyEnv)
      : "keyFile" in keys
        ? Encryption.layerText(Effect.tryPromise(() => readKeyFile(keys.keyFile)))
        : Encryption.layerCallback(keys.keys),
    NodeCipher.layer,
  )

/**
 * Reads the key file with Node's own module, loaded by name: the client's declarations carry no
 * Node types (`types: []`), and the bundle keeps the import as it is.
 */
const readKeyFile = async (path: string): Promise<string> => {
  const module = "node:fs/promises"
  const fs = (await import(module)) as {
    readonly readFile: (path: string, encoding: "utf8") => Promise<string>
  }
  return fs.readFile(path, "utf8")
}
