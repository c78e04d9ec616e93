/**
 * Which server names the store binds to this instance's URLs. A row names its server by
 * identity (name and URL); this instance drives the rows of its own identities, and those of any
 * identity under a name the store binds to this instance's URL (an operator moved the name here).
 * A name the store binds to another URL is left as it is: another instance may be using it, and
 * only an operator moves a name (`mcp-handles servers --set`, `--rebind`); meanwhile this instance
 * drives only the rows written against its own URL.
 *
 * The store's bindings are read when the client starts (which records the configured servers)
 * and again once per sweep, so that an operator's move made while the client runs is followed at
 * the sweep's cadence, not at the next restart: one small read per sweep, none per poll.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as HandleStore from "../../HandleStore.js"
import * as ServerIdentity from "../../ServerIdentity.js"
import type { Engine } from "./context.js"

/** The configured names the store binds to this instance's URL for them, in configuration order. */
const boundNames = (ctx: Engine, stored: ReadonlyArray<HandleStore.ServerRecord>): Array<string> => {
  const byName = new Map(stored.map((server) => [server.name, server.id]))
  return [...ctx.serversByName.values()]
    .filter(({ endpoint, id }) => byName.get(endpoint.name) === id)
    .map(({ endpoint }) => endpoint.name)
}

/**
 * When the client starts: records the configured servers in the store (best effort: a store
 * that cannot, such as a read-only role, still serves calls; a URL whose query looks like it
 * carries a secret is not written down; a name the store binds elsewhere is not moved), and
 * learns which names the store binds here.
 */
export const bind = (ctx: Engine, record: boolean): Effect.Effect<void> =>
  Effect.gen(function* () {
    const stored = new Map((yield* ctx.store.listServers).map((server) => [server.name, server]))
    const now = yield* ctx.store.now
    for (const { endpoint, id } of ctx.serversByName.values()) {
      const current = stored.get(endpoint.name)
      if (current !== undefined && current.id !== id) {
        yield* Effect.logWarning(
          "the store binds this server name to another URL: its calls written there are not driven here",
          {
            server: endpoint.name,
            storeUrl: current.url,
            fix: `mcp-handles servers --set ${endpoint.name}=URL moves the name (and its calls) to one URL`,
          },
        )
        continue
      }
      if (!record || ServerIdentity.secretQueryParams(endpoint.url).length > 0) continue
      const url = yield* ServerIdentity.normaliseUrl(endpoint.url)
      stored.set(endpoint.name, yield* ctx.store.recordServer({ name: endpoint.name, url, id, now }))
    }
    ctx.servers.names = boundNames(ctx, [...stored.values()])
  }).pipe(
    Effect.catchAll((error) =>
      Effect.logWarning("could not record the configured servers in the store", error),
    ),
  )

/**
 * Reads the store's bindings again (once per sweep): a name an operator moved here is driven
 * from now on, one moved away no longer claimed. A store that cannot be read leaves them as
 * they were (the sweep that follows fails on it anyway, and is tried again).
 */
export const refresh = (ctx: Engine): Effect.Effect<void> =>
  Effect.gen(function* () {
    const names = boundNames(ctx, yield* ctx.store.listServers)
    const before = ctx.servers.names
    if (names.length === before.length && names.every((name, i) => before[i] === name)) return
    ctx.servers.names = names
    yield* Effect.logInfo("the store binds other server names here now", {
      added: names.filter((name) => !before.includes(name)),
      removed: before.filter((name) => !names.includes(name)),
    })
  }).pipe(
    // The sweep goes on whatever befalls this read (a store driver's defect included): its
    // bindings stay as they were, as they did before bindings were read per sweep.
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.interrupt
        : Effect.logWarning("could not read the server bindings; keeping the ones known", cause),
    ),
  )
