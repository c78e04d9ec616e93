/**
 * Interop (issue 14, item 8): the official `@modelcontextprotocol/ext-tasks` requester, with its
 * DEFAULT result codec (which validates every answer against the pinned 2026-07-28 schemas),
 * drives the fake server over real HTTP on loopback through a direct result, a task to
 * completion, a task that needs input, a cancel and an expiry. A server answer of the wrong
 * shape fails these tests, so they check the fake server's fidelity as much as the interop.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { openTaskClient, type PromiseTaskClient } from "@mcp-handles/core/PromiseClient"
import type { SerializedTaskReference } from "@mcp-handles/core/TaskReference"
import type * as Config from "@mcp-handles/fake-server/Config"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import * as NodeHttp from "@mcp-handles/fake-server/NodeHttp"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import { type ApplicationInputRequest, TaskFailedError } from "@modelcontextprotocol/ext-tasks/client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { extTasksSession } from "../src/sides.js"

const config: Config.Config = {
  defaults: { pollIntervalMs: 20 },
  tools: [
    { name: "echo", shape: "direct", outcome: { kind: "result", text: "echo {{args.text}}" } },
    { name: "compute", durationMs: 150, outcome: { kind: "result", text: "computed {{args.n}}" } },
    {
      name: "confirm_delete",
      inputSteps: [
        {
          atMs: 0,
          requests: {
            confirm: {
              method: "elicitation/create",
              params: {
                mode: "form",
                message: "Delete {{args.file}}?",
                requestedSchema: {
                  type: "object",
                  properties: { confirm: { type: "boolean" } },
                  required: ["confirm"],
                },
              },
            },
          },
        },
      ],
      durationMs: 50,
      outcome: { kind: "result", text: "deleted {{args.file}} ({{inputs.confirm.content.confirm}})" },
    },
    { name: "forever", durationMs: 3_600_000 },
    { name: "short_lived", durationMs: 3_600_000, ttlMs: 300 },
  ],
}

/** The official requester over one plain POST per request (the bench's), answering input with `onInput`. */
const openSession = (url: string, onInput: (request: ApplicationInputRequest) => unknown) =>
  extTasksSession({ url, onInputRequest: onInput, clientName: "ext-tasks-interop" })

describe("the official ext-tasks requester (default codec) against the fake server", () => {
  const inputs: ApplicationInputRequest[] = []
  let server: FakeServer.FakeServer
  let listening: NodeHttp.Listening
  let opened: Awaited<ReturnType<typeof openSession>>
  const taskEntry = (taskId: string) => server.ledger.tasks.find((task) => task.taskId === taskId)

  beforeAll(async () => {
    server = FakeServer.unsafeMake(config)
    listening = await NodeHttp.listen(server)
    opened = await openSession(listening.url, (request) => {
      inputs.push(request)
      return { action: "accept", content: { confirm: true } }
    })
  })

  afterAll(async () => {
    await opened?.close()
    await listening?.close()
  })

  it("a direct result", async () => {
    const execution = await opened.session.callTool("echo", { text: "hi" })
    expect(execution.kind).toBe("immediate")
    const { outcome } = await execution.settle()
    expect(outcome).toMatchObject({
      status: "completed",
      result: { resultType: "complete", content: [{ type: "text", text: "echo hi" }] },
    })
  })

  it("a task polled to completion", async () => {
    const execution = await opened.session.callTool("compute", { n: 7 })
    expect(execution.kind).toBe("task")
    const { outcome, lastTask } = await execution.settle()
    expect(outcome).toMatchObject({
      status: "completed",
      result: { resultType: "complete", content: [{ type: "text", text: "computed 7" }] },
    })
    expect(lastTask?.status).toBe("completed")
    const taskId = execution.kind === "task" ? execution.handle.taskId : undefined
    expect(server.ledger.launches.filter((launch) => launch.taskId === taskId)).toHaveLength(1)
  })

  it("a task that needs input: asked once, answered through tasks/update, then completed", async () => {
    const before = inputs.length
    const execution = await opened.session.callTool("confirm_delete", { file: "a.txt" })
    expect(execution.kind).toBe("task")
    const { outcome } = await execution.settle()
    expect(outcome).toMatchObject({
      status: "completed",
      result: { content: [{ type: "text", text: "deleted a.txt (true)" }] },
    })
    expect(inputs.slice(before)).toEqual([
      expect.objectContaining({
        kind: "elicitation",
        params: expect.objectContaining({ message: "Delete a.txt?" }),
      }),
    ])
    const taskId = execution.kind === "task" ? execution.handle.taskId : ""
    expect(taskEntry(taskId)?.updates.flatMap((update) => update.accepted)).toEqual(["confirm"])
  })

  it("a cancel ends the task cancelled", async () => {
    const execution = await opened.session.callTool("forever", {})
    expect(execution.kind).toBe("task")
    const settled = execution.settle()
    await execution.cancel()
    const { outcome } = await settled
    expect(outcome.status).toBe("cancelled")
    const taskId = execution.kind === "task" ? execution.handle.taskId : ""
    expect(taskEntry(taskId)?.cancels.length).toBeGreaterThanOrEqual(1)
  })

  it("an expired task ends failed with the server's -32602 instead of being polled forever", async () => {
    const execution = await opened.session.callTool("short_lived", {})
    expect(execution.kind).toBe("task")
    const { outcome } = await execution.settle()
    // Past its TTL the task answers "expired" (-32602); ext-tasks ends the execution failed with it.
    expect(outcome.status).toBe("failed")
    const error = outcome.status === "failed" ? outcome.error : undefined
    expect(error).toBeInstanceOf(TaskFailedError)
    expect(error?.code).toBe(-32602)
    expect(error?.message).toMatch(/expired/)
  })
})

/**
 * Issue 15, item 8: a task moves between the two requesters through ext-tasks'
 * `SerializedTaskReference`: one ext-tasks handed off is adopted as a durable row and settled by
 * mcp-handles; one mcp-handles holds is exported and resumed by ext-tasks with its default codec.
 */
describe("task references between ext-tasks and mcp-handles", () => {
  let server: FakeServer.FakeServer
  let listening: NodeHttp.Listening
  let opened: Awaited<ReturnType<typeof openSession>>
  let client: PromiseTaskClient
  const dir = mkdtempSync(join(tmpdir(), "ext-tasks-references-"))

  beforeAll(async () => {
    server = FakeServer.unsafeMake(config)
    listening = await NodeHttp.listen(server)
    opened = await openSession(listening.url, () => ({ action: "accept", content: { confirm: true } }))
    client = await openTaskClient({
      store: SqliteStore.layer({ filename: join(dir, "handles.db") }),
      servers: [{ name: "fake", url: listening.url }],
      polling: { minIntervalMs: 10 },
    })
  })

  afterAll(async () => {
    await client?.close()
    await opened?.close()
    await listening?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it("a task ext-tasks handed off is adopted as a durable row and settled, launched once", async () => {
    const execution = await opened.session.callTool("compute", { n: 9 })
    expect(execution.kind).toBe("task")
    let saved: SerializedTaskReference | undefined
    if (execution.kind === "task") {
      await execution.handoff((reference) => {
        saved = reference as SerializedTaskReference
      })
    }
    expect(saved).toMatchObject({ endpointId: "fake", generation: "v2", originalOperation: "tools/call" })
    const handle = await client.adopt("fake", saved as SerializedTaskReference, {
      key: "from-ext",
      tool: "compute",
    })
    expect(handle.record).toMatchObject({ key: "from-ext", taskId: saved?.taskId, status: "working" })
    const outcome = await handle.outcome()
    expect(outcome._tag === "Completed" && outcome.result.content).toEqual([
      { type: "text", text: "computed 9" },
    ])
    expect(server.ledger.launches.filter((launch) => launch.taskId === saved?.taskId)).toHaveLength(1)
  })

  it("a task mcp-handles holds is exported and resumed by ext-tasks with its default codec", async () => {
    const handle = await client.callTool("fake", "compute", { n: 10 }, { key: "to-ext" })
    const reference = await client.reference("to-ext", { endpointId: "fake" })
    expect(reference).toEqual({
      endpointId: "fake",
      generation: "v2",
      taskId: handle.record.taskId,
      originalOperation: "tools/call",
    })
    // ext-tasks brands its task ids (`TaskId`); the reference is otherwise its very shape.
    const execution = await opened.session.resumeTask(
      reference as Parameters<typeof opened.session.resumeTask>[0],
    )
    const { outcome } = await execution.settle()
    expect(outcome).toMatchObject({
      status: "completed",
      result: { resultType: "complete", content: [{ type: "text", text: "computed 10" }] },
    })
    const settled = await handle.outcome()
    expect(settled._tag).toBe("Completed")
    expect(server.ledger.launches.filter((launch) => launch.idempotencyKey === "to-ext")).toHaveLength(1)
  })
})
