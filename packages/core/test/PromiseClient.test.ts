import { execFileSync } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { openTaskClient } from "@mcp-handles/core"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import { MemoryStore } from "@mcp-handles/store-memory"
import * as Duration from "effect/Duration"
import { describe, expect, it } from "vitest"
import { killGroup, runGroup, spawnGroup } from "../../../scripts/testing/process-groups.mjs"
import * as AsyncDispose from "../src/internal/asyncDispose.js"
import { listen } from "./support/wire.js"

// The facade in real time, with short tasks: plain async code, no Effect in sight.
describe("openTaskClient", () => {
  const server = FakeServer.unsafeMake({
    tools: [
      {
        name: "slow",
        shape: "task",
        durationMs: 600,
        pollIntervalMs: 250,
        outcome: { kind: "result", text: "done" },
      },
      {
        name: "ask",
        shape: "task",
        durationMs: 300,
        pollIntervalMs: 250,
        inputSteps: [
          { atMs: 100, requests: { name: { method: "elicitation/create", params: { message: "Name?" } } } },
        ],
        outcome: { kind: "result", text: "hi {{inputs.name.content.name}}" },
      },
    ],
  })
  const open = () =>
    openTaskClient({
      store: MemoryStore.layer,
      servers: [{ name: "fake", url: "http://fake.test/mcp" }],
      http: { fetch: (input, init) => server.handler(new Request(input, init)) },
      onInputRequired: async (request) => ({ action: "accept", content: { name: `${request.inputKey}!` } }),
    })

  it("calls, settles, answers input, lists, and closes", async () => {
    const client = await open()
    try {
      const handle = await client.callTool("fake", "slow", { n: 1 }, { key: "p1" })
      expect(handle.launched).toBe(true)
      expect(handle.record.taskId).not.toBeNull()
      const outcome = await handle.outcome()
      expect(outcome._tag === "Completed" && outcome.result.content).toEqual([{ type: "text", text: "done" }])
      expect(await client.settle("p1")).toEqual(outcome)

      const asked = await client.callTool("fake", "ask", {})
      const answered = await asked.outcome()
      expect(answered._tag === "Completed" && answered.result.content).toEqual([
        { type: "text", text: "hi name!" },
      ])

      const page = await client.list({ statuses: ["completed"] })
      expect(page.records.map((r) => r.key)).toContain("p1")
    } finally {
      await client.close()
    }
  })

  it("lists a server's tools with their descriptions and schemas", async () => {
    const client = await open()
    try {
      const tools = await client.listTools("fake")
      expect(tools.map((tool) => [tool.name, tool.description])).toEqual([
        ["slow", "Fake tool slow"],
        ["ask", "Fake tool ask"],
      ])
      expect(tools[0]?.inputSchema).toEqual({ type: "object" })
      await expect(client.listTools("nowhere")).rejects.toMatchObject({ _tag: "UnknownServer" })
    } finally {
      await client.close()
    }
  })

  it("rejects with typed errors", async () => {
    const client = await open()
    try {
      await expect(client.callTool("fake", "slow", { f: () => 1 })).rejects.toMatchObject({
        _tag: "InvalidJson",
      })
      await expect(client.settle("missing")).rejects.toMatchObject({ _tag: "UnknownKey" })
      await expect(client.reissue("p-none")).rejects.toMatchObject({ _tag: "UnknownKey" })
    } finally {
      await client.close()
    }
  })
})

// An input handler whose answer does not fit the request: the wait rejects, typed, with why.
describe("openTaskClient, with a handler that answers wrongly", () => {
  const server = FakeServer.unsafeMake({
    tools: [
      {
        name: "ask",
        shape: "task",
        durationMs: 300,
        pollIntervalMs: 100,
        inputSteps: [
          {
            atMs: 0,
            requests: {
              name: {
                method: "elicitation/create",
                params: {
                  mode: "form",
                  message: "Name?",
                  requestedSchema: {
                    type: "object",
                    properties: { name: { type: "string" } },
                    required: ["name"],
                  },
                },
              },
            },
          },
        ],
        outcome: { kind: "result", text: "hi {{inputs.name.content.name}}" },
      },
    ],
  })

  it("rejects outcome() with InputRequired and the problems; answer() then finishes the call", async () => {
    const events: Array<string> = []
    await using client = await openTaskClient({
      store: MemoryStore.layer,
      servers: [{ name: "fake", url: "http://fake.test/mcp" }],
      http: { fetch: (input, init) => server.handler(new Request(input, init)) },
      onInputRequired: async () => ({ action: "accept", content: { nom: "Ada" } }),
    })
    const feed = (async () => {
      for await (const event of client.events("w", { pollIntervalMs: 20 })) events.push(event._tag)
    })()
    const handle = await client.callTool("fake", "ask", {}, { key: "w" })
    await expect(handle.outcome()).rejects.toMatchObject({
      _tag: "InputRequired",
      requests: [
        {
          inputKey: "name",
          problems: [
            'the required field "name" is missing',
            '"nom" is not a field of the form (its fields: name)',
          ],
        },
      ],
    })
    await client.answer("w", "name", { action: "accept", content: { name: "Ada" } })
    const outcome = await client.settle("w")
    expect(outcome._tag === "Completed" && outcome.result.content).toEqual([{ type: "text", text: "hi Ada" }])
    await feed
    expect(events.filter((tag) => tag === "InvalidAnswer")).toHaveLength(1)
  })
})

// What a Promise user meets: Error subclasses with a tag and a sentence, a close that ends every
// wait, `await using`, durations as the CLI writes them.
describe("openTaskClient, natively", () => {
  const server = FakeServer.unsafeMake({
    tools: [{ name: "slow", shape: "task", durationMs: 60_000, pollIntervalMs: 250 }],
  })
  const servers = [{ name: "fake", url: "http://fake.test/mcp" }]
  const http = {
    fetch: (input: RequestInfo | URL, init?: RequestInit) => server.handler(new Request(input, init)),
  }
  const open = () => openTaskClient({ store: MemoryStore.layer, servers, http })

  it("rejects with Error subclasses that carry a _tag and a readable message", async () => {
    const client = await open()
    try {
      const error = await client.settle("missing").catch((e: unknown) => e)
      expect(error).toBeInstanceOf(Error)
      expect(error).toMatchObject({ _tag: "UnknownKey", key: "missing", scope: "default" })
      expect(String(error)).toBe('UnknownKey: no call with key "missing" in scope "default"')
      const unknownServer = await client.callTool("nowhere", "slow", {}).catch((e: unknown) => e)
      expect(unknownServer).toBeInstanceOf(Error)
      expect(String(unknownServer)).toBe(
        'UnknownServer: the server "nowhere" is not configured on this client',
      )
      const badKey = await client.callTool("fake", "slow", {}, { key: "" }).catch((e: unknown) => e)
      expect(badKey).toBeInstanceOf(Error)
      expect(String(badKey)).toBe("InvalidKey: invalid key: must be 1 to 512 characters")
    } finally {
      await client.close()
    }
  })

  it("rejects every call after close() with ClientClosed, and close() is idempotent", async () => {
    const client = await open()
    await client.close()
    await client.close()
    for (const attempt of [
      () => client.callTool("fake", "slow", {}),
      () => client.settle("k"),
      () => client.get("k"),
      () => client.list(),
      () => client.reconcile(),
      () => client.gc("7d"),
    ]) {
      const error = await attempt().catch((e: unknown) => e)
      expect(error).toBeInstanceOf(Error)
      expect(error).toMatchObject({ _tag: "ClientClosed" })
    }
    const error = await client.get("k").catch((e: unknown) => e)
    expect(String(error)).toBe(
      "ClientClosed: get: the client is closed; its open calls stay in the store for the next client",
    )
  })

  it("ends a wait still pending at close() with ClientClosed, and hands the call off", async () => {
    const client = await open()
    const handle = await client.callTool("fake", "slow", {}, { key: "long" })
    const waiting = handle.outcome().catch((e: unknown) => e)
    const settling = client.settle("long").catch((e: unknown) => e)
    await client.close()
    expect(await waiting).toMatchObject({ _tag: "ClientClosed", operation: "outcome" })
    expect(await settling).toMatchObject({ _tag: "ClientClosed", operation: "settle" })
  })

  it("closes at the end of an `await using` block", async () => {
    let escaped: Awaited<ReturnType<typeof open>> | undefined
    {
      await using client = await open()
      escaped = client
      await client.callTool("fake", "slow", {}, { key: "scoped" })
      expect((await client.get("scoped")).status).toBe("working")
    }
    expect(await escaped.get("scoped").catch((e: unknown) => e)).toMatchObject({ _tag: "ClientClosed" })
  })

  it("takes durations as the CLI writes them, or as Effect durations, and refuses others typed", async () => {
    const client = await open()
    try {
      expect(await client.gc("7d")).toEqual({ deleted: 0, kept: 0, unacknowledged: [] })
      expect((await client.gc(Duration.days(7))).deleted).toBe(0)
      expect((await client.gc("1.5h")).deleted).toBe(0)
      const error = await client.gc("7 dayz" as never).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(Error)
      expect(error).toMatchObject({ _tag: "InvalidDuration", input: "7 dayz" })
    } finally {
      await client.close()
    }
    const timeout = await openTaskClient({
      store: MemoryStore.layer,
      servers,
      http,
      inputTimeout: "10m",
      callTimeout: "30s",
    })
    await timeout.close()
    const refused = await openTaskClient({
      store: MemoryStore.layer,
      servers,
      callTimeout: "soon" as never,
    }).catch((e: unknown) => e)
    expect(refused).toMatchObject({ _tag: "InvalidDuration", input: "soon" })
  })

  it("rejects opening with the store's typed error, and holds nothing open after it", async () => {
    const error = await openTaskClient({
      store: MemoryStore.layer,
      servers: [{ name: "x", url: "ftp://x" }],
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Error)
    expect(error).toMatchObject({ _tag: "InvalidServerUrl" })
  })

  it("defines Symbol.asyncDispose where the runtime has none, as TypeScript's lowering expects", () => {
    expect(AsyncDispose.ensure()).toBe(Symbol.asyncDispose)
    const bare = { for: Symbol.for } as unknown as SymbolConstructor
    expect(AsyncDispose.ensure(bare)).toBe(Symbol.for("Symbol.asyncDispose"))
    expect(bare.asyncDispose).toBe(Symbol.for("Symbol.asyncDispose"))
  })
})

// A real process on real sockets: after close() the process ends by itself; while a client is
// open (its background reconciler runs) it does not, by design.
describe("openTaskClient and the process", () => {
  const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "call-and-close.mjs")
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")
  const server = FakeServer.unsafeMake({
    tools: [{ name: "quick", shape: "task", durationMs: 300, pollIntervalMs: 250 }],
  })
  const serve = () =>
    listen((body, request, response) => {
      const headers = new Headers()
      for (const [name, value] of Object.entries(request.headers)) {
        if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value)
      }
      void server
        .handler(
          new Request(`http://127.0.0.1${request.url}`, { method: request.method ?? "POST", headers, body }),
        )
        .then(async (answer) => {
          answer.headers.forEach((value, name) => {
            response.setHeader(name, value)
          })
          response.writeHead(answer.status)
          response.end(await answer.text())
        })
    })

  it("exits by itself after close(), and not while the client is open", { timeout: 120_000 }, async () => {
    // The child runs the built packages, as an app would.
    execFileSync("npx", ["tsc", "-b", "packages/store-memory/tsconfig.src.json"], { cwd: root })
    const real = await serve()
    try {
      // Only a process that never ends reaches this bound: a slow machine only takes longer.
      const closed = await runGroup(process.execPath, [fixture, real.url, "close"], { timeoutMs: 90_000 })
      expect(closed.stdout.trim()).toBe("Completed")
      expect(closed.code).toBe(0)
      // The window a client left open must keep the process alive is counted from its outcome,
      // not from the spawn: a loaded machine once spent the whole 5 s starting the child. A slow
      // machine can only make it easier for this check to pass, never make it fail.
      const open = spawnGroup(process.execPath, [fixture, real.url, "leave-open"], {
        stdio: ["ignore", "pipe", "pipe"],
      })
      const ended = new Promise<NodeJS.Signals | number | null>((resolve) =>
        open.once("close", (code, signal) => resolve(signal ?? code)),
      )
      let stdout = ""
      await new Promise<void>((resolve) => {
        open.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
          stdout += chunk
          if (stdout.includes("\n")) resolve()
        })
        void ended.then(() => resolve())
      })
      expect(stdout.trim()).toBe("Completed")
      const early = await Promise.race([
        ended,
        new Promise<"running">((resolve) => setTimeout(() => resolve("running"), 3_000)),
      ])
      expect(early, "the process ended with its client open").toBe("running")
      killGroup(open)
      expect(await ended).toBe("SIGKILL")
    } finally {
      await real.close()
    }
  })
})
