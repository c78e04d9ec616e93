/**
 * Servers kept in the store (issues 15 item 7 and 16), through the built binary: an
 * application's calls resumed by its server's name, a name moved to another URL, `servers`
 * listing, setting, removing and rebinding, the old JSON file read once, and the exit codes.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { openTaskClient } from "@mcp-handles/core"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import type * as Config from "@mcp-handles/fake-server/Config"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { describe, expect, it, vi } from "vitest"
import * as Output from "../src/Output.js"
import { fixture, oneLine, processTestTimeout, seedCall } from "./support.js"

vi.setConfig({ testTimeout: processTestTimeout })

const config: Config.Config = {
  tools: [
    {
      name: "job",
      shape: "task",
      durationMs: 300,
      pollIntervalMs: 100,
      outcome: { kind: "result", text: "done {{args.n}}" },
    },
  ],
}

const fx = fixture(config)

/** A fresh SQLite store of this test's own, as a path and as `--store`. */
const storeOf = (name: string) => {
  mkdirSync(join(fx.ws.dir, name), { recursive: true })
  const filename = join(fx.ws.dir, name, "tasks.db")
  return { filename, flag: `sqlite:${filename}` }
}

const serversOf = async (store: string) => {
  const ran = await fx.ws.run("servers", "--store", store, "--json")
  expect(ran.code, ran.stderr).toBe(0)
  return Schema.decodeUnknownSync(Output.Servers, { onExcessProperty: "error" })(JSON.parse(ran.stdout))
}

describe("servers kept in the store", () => {
  it("an application's calls are resumed by its server's name, with no flag", async () => {
    const store = storeOf("app")
    const app = await openTaskClient({
      store: SqliteStore.layer({ filename: store.filename }),
      servers: [{ name: "research", url: fx.server.url }],
      background: false,
    })
    await app.callTool("research", "job", { n: 9 }, { key: "app-1" })
    await app.close() // hands the open call off

    const { servers } = await serversOf(store.flag)
    expect(servers).toEqual([
      {
        name: "research",
        url: fx.server.url,
        id: expect.stringMatching(/^research:[0-9a-f]{16}$/),
        firstSeenAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        lastSeenAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    ])
    const resumed = await fx.ws.run("resume", "--store", store.flag)
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stderr).toContain("app-1: completed: done 9")
    const listed = await fx.ws.run("list", "--store", store.flag, "--server", "research")
    expect(listed.stdout).toMatch(/^app-1\s+completed\s+job\s+research\s/m)
  })

  it("a name the store does not know is skipped with a hint that works; --set moves the name and its calls follow", async () => {
    const store = storeOf("moved")
    // An app that does not record its servers, at one URL of the server ...
    const app = await openTaskClient({
      store: SqliteStore.layer({ filename: store.filename }),
      servers: [{ name: "research", url: fx.server.url }],
      background: false,
      recordServers: false,
    })
    await app.callTool("research", "job", { n: 5 }, { key: "app-2" })
    await app.close()

    const skipped = await fx.ws.run("resume", "--store", store.flag)
    expect(skipped.code, skipped.stderr).toBe(3)
    expect(skipped.stderr).toContain(
      "app-2: skipped; the store knows no URL for its server research (add it: mcp-handles servers --set research=URL, or pass --server research=URL)",
    )
    // ... then named at another URL of the same server: a new identity, the same name.
    const elsewhere = fx.server.url.replace("127.0.0.1", "localhost")
    const set = await fx.ws.run("servers", "--store", store.flag, "--set", `research=${elsewhere}`)
    expect(set.code, set.stderr).toBe(0)
    expect(set.stdout).toMatch(/^NAME\s+URL\s+FIRST SEEN\s+LAST SEEN$/m)
    expect(set.stdout).toMatch(
      new RegExp(`^research\\s+${elsewhere.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s`, "m"),
    )
    const resumed = await fx.ws.run("resume", "--store", store.flag)
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stderr).toContain("app-2: completed: done 5")
    const ledger = await fx.server.ledger()
    expect(ledger.launches.filter((l) => l.idempotencyKey === "app-2")).toHaveLength(1)
  })

  it("--rebind moves every call of a name, in every scope; --remove forgets a name; mistakes exit 2", async () => {
    const store = storeOf("rebind")
    const now = Date.now()
    await Effect.runPromise(
      Effect.flatMap(HandleStore.HandleStore, (s) =>
        Effect.all([
          s.insertOrGet(seedCall("r1", now)),
          s.insertOrGet({ ...seedCall("r2", now + 1), scope: "acme" }),
          s.insertOrGet({ ...seedCall("other", now + 2), serverId: "billing:0123456789abcdef" }),
        ]),
      ).pipe(Effect.provide(SqliteStore.layer({ filename: store.filename }))),
    )
    const ran = await fx.ws.run(
      "servers",
      "--store",
      store.flag,
      "--set",
      `research-v2=${fx.server.url}`,
      "--rebind",
      "research=research-v2",
      "--json",
    )
    expect(ran.code, ran.stderr).toBe(0)
    const out = Schema.decodeUnknownSync(Output.Servers)(JSON.parse(ran.stdout))
    expect(out.rebound).toBe(2)
    expect(out.servers.map((s) => s.name)).toEqual(["research-v2"])
    const listed = await fx.ws.run("list", "--store", store.flag, "--all-scopes", "--json")
    const rows = Schema.decodeUnknownSync(Output.List)(JSON.parse(listed.stdout))
    expect(rows.map((r) => [r.scope, r.key, r.server, r.serverUrl])).toEqual([
      ["default", "r1", "research-v2", fx.server.url],
      ["acme", "r2", "research-v2", fx.server.url],
      ["default", "other", "billing", null],
    ])

    const unknownTarget = await fx.ws.run("servers", "--store", store.flag, "--rebind", "billing=nowhere")
    expect(unknownTarget.code).toBe(2)
    expect(oneLine(unknownTarget)).toBe(
      "mcp-handles: --rebind: the store knows no server nowhere; add it first with --set nowhere=URL",
    )
    const malformed = await fx.ws.run("servers", "--store", store.flag, "--rebind", "billing")
    expect(malformed.code).toBe(2)
    const badUrl = await fx.ws.run("servers", "--store", store.flag, "--set", "x=ftp://example.com")
    expect(badUrl.code).toBe(2)
    const secret = await fx.ws.run(
      "servers",
      "--store",
      store.flag,
      "--set",
      "x=https://example.com/mcp?token=abc",
    )
    expect(secret.code).toBe(2)
    expect(secret.stderr).not.toContain("abc")

    const removed = await fx.ws.run("servers", "--store", store.flag, "--remove", "research-v2", "--json")
    expect(removed.code, removed.stderr).toBe(0)
    expect(JSON.parse(removed.stdout)).toEqual({ servers: [], removed: ["research-v2"], rebound: 0 })
    const again = await fx.ws.run("servers", "--store", store.flag, "--remove", "research-v2")
    expect(again.code).toBe(2)
    expect(oneLine(again)).toBe("mcp-handles: --remove: the store knows no server research-v2")
    const empty = await fx.ws.run("servers", "--store", store.flag)
    expect(empty.stdout).toMatch(/^no servers in the store/)
  })

  it("call NAME=URL records the server under that name", async () => {
    const store = storeOf("named-call")
    const ran = await fx.ws.run("call", `mine=${fx.server.url}`, "job", "--key", "n1", "--store", store.flag)
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout.trim()).toBe("n1: completed: done")
    expect((await serversOf(store.flag)).servers.map((s) => [s.name, s.url])).toEqual([
      ["mine", fx.server.url],
    ])
    const listed = await fx.ws.run("list", "--store", store.flag, "--json")
    expect(JSON.parse(listed.stdout)[0]).toMatchObject({
      key: "n1",
      server: "mine",
      serverUrl: fx.server.url,
    })
  })

  it("fails on a missing store, naming it, and creates nothing", async () => {
    const missing = join(fx.ws.dir, "nowhere", "tasks.db")
    const ran = await fx.ws.run("servers", "--store", `sqlite:${missing}`, "--set", `a=${fx.server.url}`)
    expect(ran.code).toBe(1)
    expect(oneLine(ran)).toContain(missing)
    expect(existsSync(missing)).toBe(false)
  })

  it("reads an old tasks.db.servers.json once into the store, then renames it", async () => {
    const store = storeOf("legacy")
    await Effect.runPromise(
      Effect.flatMap(HandleStore.HandleStore, (s) => s.insertOrGet(seedCall("l1", Date.now()))).pipe(
        Effect.provide(SqliteStore.layer({ filename: store.filename })),
      ),
    )
    const file = `${store.filename}.servers.json`
    writeFileSync(
      file,
      JSON.stringify({
        servers: [
          { id: "research:0123456789abcdef", name: "research", url: fx.server.url },
          { id: "bad", name: "bad", url: "not a url" },
        ],
      }),
    )
    const { servers } = await serversOf(store.flag)
    expect(servers.map((s) => [s.name, s.url])).toEqual([["research", fx.server.url]])
    expect(existsSync(file)).toBe(false)
    expect(existsSync(`${file}.imported`)).toBe(true)
    // Read once: a later file is not read again, and the store keeps what it had.
    expect((await serversOf(store.flag)).servers).toHaveLength(1)
  })
})
