/**
 * Task ids are secrets (issue 32): no full task id in anything the binary prints (stdout and
 * stderr, text and `--json`, with `--verbose` logs), for calls against the fake server and
 * against a 2025-11-25 server on the official SDK 1.x task API (whose results carry the id again
 * in `_meta["io.modelcontextprotocol/related-task"]`), unless `--reveal`; with `--reveal` the
 * ids do appear, which is what shows the search would find them.
 */
import type { ChildProcess } from "node:child_process"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { openTaskClient } from "@mcp-handles/core"
import type * as Config from "@mcp-handles/fake-server/Config"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { killGroup, spawnGroup } from "../../../scripts/testing/process-groups.mjs"
import { fakeServer, processTestTimeout, type Ran, type Workspace, workspace } from "./support.js"

/** A task the app created itself, straight at the fake server (2026-07-28), for adopting. */
const createTask = async (url: string, tool: string): Promise<string> => {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": tool,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: tool,
        arguments: {},
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {
            extensions: { "io.modelcontextprotocol/tasks": {} },
          },
        },
      },
    }),
  })
  const body = (await response.json()) as { readonly result: { readonly taskId: string } }
  return body.result.taskId
}

/** Every output of every run, and which of them revealed. */
const transcript = () => {
  const hidden: Array<string> = []
  const revealed: Array<string> = []
  return {
    hidden,
    revealed,
    run: async (w: Workspace, ...args: ReadonlyArray<string>): Promise<Ran> => {
      const ran = await w.run(...args)
      const into = args.includes("--reveal") ? revealed : hidden
      into.push(`$ mcp-handles ${args.join(" ")} (exit ${ran.code})\n${ran.stdout}${ran.stderr}`)
      return ran
    },
  }
}

const taskIdsOf = (ran: Ran): ReadonlyArray<string> => {
  const rows = JSON.parse(ran.stdout) as ReadonlyArray<{ readonly taskId: string | null }>
  return rows.flatMap((row) => (row.taskId === null ? [] : [row.taskId]))
}

/** Fails naming the output that holds a full id. */
const expectNoneOf = (ids: ReadonlyArray<string>, outputs: ReadonlyArray<string>) => {
  for (const output of outputs) {
    for (const id of ids) {
      expect(output.includes(id), `task id ${id} in:\n${output}`).toBe(false)
    }
  }
}

/** The commands of the brief, against `url`: call (completing, and detached then cancelled), show, list, resume. */
const everyCommand = async (
  w: Workspace,
  t: ReturnType<typeof transcript>,
  url: string,
  tools: { readonly done: string; readonly long: string },
) => {
  const call = await t.run(w, "call", url, tools.done, "--key", "done-1", "--verbose")
  expect(call.code, call.stderr).toBe(0)
  const callJson = await t.run(w, "call", url, tools.done, "--key", "done-2", "--json", "--verbose")
  expect(callJson.code, callJson.stderr).toBe(0)
  const detached = await t.run(w, "call", url, tools.long, "--key", "open-1", "--detach", "--verbose")
  expect(detached.code, detached.stderr).toBe(0)
  const detached2 = await t.run(w, "call", url, tools.long, "--key", "open-2", "--detach", "--json")
  expect(detached2.code, detached2.stderr).toBe(0)
  for (const args of [
    ["list", "--verbose"],
    ["list", "--json", "--verbose"],
    ["show", "done-1", "--verbose"],
    ["show", "done-2", "--json", "--verbose"],
    ["show", "open-1", "--json"],
  ]) {
    const ran = await t.run(w, ...args)
    expect(ran.code, ran.stderr).toBe(0)
  }
  const cancelled = await t.run(w, "cancel", "open-1", "--json", "--verbose")
  expect(cancelled.code, cancelled.stderr).toBe(0)
  const cancelledText = await t.run(w, "cancel", "open-2", "--verbose")
  expect(cancelledText.code, cancelledText.stderr).toBe(0)
  const resumed = await t.run(w, "resume", "--json", "--verbose")
  expect(resumed.code, resumed.stderr).not.toBe(null)
  await t.run(w, "resume", "--verbose")
  // The same views with --reveal: the ids are there to be found.
  const listed = await t.run(w, "list", "--json", "--reveal")
  expect(listed.code, listed.stderr).toBe(0)
  await t.run(w, "show", "done-1", "--reveal")
  await t.run(w, "show", "done-2", "--json", "--reveal")
  return taskIdsOf(listed)
}

describe("no full task id in the CLI's output unless --reveal", () => {
  const config: Config.Config = {
    tools: [
      {
        name: "done",
        shape: "task",
        durationMs: 600,
        pollIntervalMs: 200,
        workingMessage: "working on task {{taskId}}",
        outcome: { kind: "result", text: "done: task {{taskId}} finished" },
      },
      {
        name: "long",
        shape: "task",
        durationMs: 60_000,
        pollIntervalMs: 200,
        workingMessage: "still on {{taskId}}",
      },
    ],
  }
  let w: Workspace | undefined
  let stop: (() => void) | undefined
  afterAll(() => {
    stop?.()
    w?.dispose()
  })

  it(
    "against the fake server",
    async () => {
      w = workspace()
      const server = await fakeServer(w.dir, config)
      stop = server.stop
      const t = transcript()
      const ids = await everyCommand(w, t, server.url, { done: "done", long: "long" })
      const ledger = (await server.ledger()).tasks.map((task) => task.taskId)
      expect(ledger).toHaveLength(4)
      expect([...ids].sort()).toEqual([...ledger].sort())

      // A row adopted the way earlier versions keyed it (`adopted:{taskId}`): its KEY column
      // and every view of it are redacted too.
      const adoptedId = await createTask(server.url, "long")
      const app = await openTaskClient({
        store: SqliteStore.layer({ filename: path.join(w.dir, ".mcp-handles", "tasks.db") }),
        servers: [{ name: "fake", url: server.url }],
        background: false,
      })
      try {
        await app.adopt("fake", adoptedId, { key: `adopted:${adoptedId}` })
      } finally {
        await app.close()
      }
      for (const args of [
        ["list", "--verbose"],
        ["list", "--json"],
        ["list", "--stuck"],
      ]) {
        await t.run(w, ...args)
      }
      const revealedList = await t.run(w, "list", "--json", "--reveal")
      expect(revealedList.stdout).toContain(`adopted:${adoptedId}`)
      expectNoneOf([...ledger, adoptedId], t.hidden)
      // The results, status messages and the table name the ids: --reveal shows them whole.
      for (const id of ledger) expect(t.revealed.join("\n")).toContain(id)
    },
    processTestTimeout * 2,
  )
})

describe("no full task id in the CLI's output unless --reveal, against an SDK 1.x server", () => {
  const storeSqliteDir = fileURLToPath(new URL("../../store-sqlite/", import.meta.url))
  const serverScript = path.join(storeSqliteDir, "test", "fixtures", "sdk1-server.mjs")
  let server: ChildProcess | undefined
  let url = ""
  let w: Workspace | undefined

  beforeAll(async () => {
    const child = spawnGroup(process.execPath, [serverScript], {
      cwd: storeSqliteDir,
      stdio: ["ignore", "pipe", "inherit"],
    })
    server = child
    const port = await new Promise<string>((resolve, reject) => {
      child.once("exit", (code) =>
        reject(new Error(`the SDK 1.x server exited with ${code} before listening`)),
      )
      createInterface({ input: child.stdout }).on("line", (line) => {
        const match = /^listening (\d+)$/.exec(line.trim())
        if (match?.[1] !== undefined) resolve(match[1])
      })
    })
    url = `http://127.0.0.1:${port}/mcp`
  }, 60_000)

  afterAll(() => {
    if (server !== undefined) killGroup(server, "SIGKILL")
    w?.dispose()
  })

  it(
    "call, show, list, resume, cancel: the ids (also in results' related-task _meta) are redacted",
    async () => {
      w = workspace()
      const t = transcript()
      const ids = await everyCommand(w, t, url, { done: "sleep_1500", long: "sleep_60000" })
      expect(ids).toHaveLength(4)
      expectNoneOf(ids, t.hidden)
      const revealed = t.revealed.join("\n")
      for (const id of ids) expect(revealed).toContain(id)
      // Where the SDK repeats the id: a completed result's related-task reference.
      expect(revealed).toContain("io.modelcontextprotocol/related-task")
    },
    processTestTimeout * 2,
  )
})
