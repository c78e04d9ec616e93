/**
 * The on-call views: who drives each call, when it was polled and is due, and `--stuck` with the
 * reason, on rows written straight into a store in the states an on-call engineer meets.
 */
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import * as Output from "../src/Output.js"
import { processTestTimeout, seedCall, type Workspace, workspace } from "./support.js"

vi.setConfig({ testTimeout: processTestTimeout })

let ws: Workspace
const minute = 60_000

/** Writes a call as it would be after `fields` happened to it. */
const seed = (
  key: string,
  createdAgoMs: number,
  fields: (now: number) => Partial<HandleRecord.HandleRecord>,
) =>
  Effect.gen(function* () {
    const store = yield* HandleStore.HandleStore
    const now = Date.now()
    const { record } = yield* store.insertOrGet(seedCall(key, now - createdAgoMs))
    const changes = fields(now)
    if (Object.keys(changes).length > 0)
      yield* store.update(new HandleRecord.HandleRecord({ ...record, ...changes }))
  })

const snapshot = (now: number, lastUpdatedAgoMs: number) =>
  HandleRecord.TaskSnapshot.make({
    statusMessage: "working",
    pollIntervalMs: 1_000,
    ttlMs: null,
    createdAt: now - 30 * minute,
    lastUpdatedAt: now - lastUpdatedAgoMs,
    receivedAt: now - 30 * minute,
  })

beforeAll(async () => {
  ws = workspace()
  mkdirSync(join(ws.dir, ".mcp-handles"))
  const working = { status: "working" as const }
  await Effect.runPromise(
    Effect.all([
      // Driven by worker-1, due in ten minutes: healthy.
      seed("healthy", minute, (now) => ({
        ...working,
        taskId: "task-healthy-00000000",
        snapshot: snapshot(now, minute),
        leaseOwner: "worker-1",
        leaseExpiresAt: now + 20 * minute,
        nextPollAt: now + 10 * minute,
        updatedAt: now - 1_000,
        polls: 3,
      })),
      // worker-7 died five minutes ago; nobody has polled it since.
      seed("orphaned", 30 * minute, (now) => ({
        ...working,
        taskId: "task-orphaned-0000000",
        snapshot: snapshot(now, 6 * minute),
        leaseOwner: "worker-7",
        leaseExpiresAt: now - 5 * minute,
        nextPollAt: now - 5 * minute,
        updatedAt: now - 6 * minute,
      })),
      seed("refused", 30 * minute, (now) => ({
        ...working,
        taskId: "task-refused-00000000",
        snapshot: snapshot(now, minute),
        attempts: 6,
        lastProblem: "unauthorized: HTTP 401",
        nextPollAt: now + 10_000,
      })),
      seed("asking", 30 * minute, (now) => ({
        status: "input_required" as const,
        taskId: "task-asking-000000000",
        snapshot: snapshot(now, 20 * minute),
        inputRequests: { confirm: { method: "elicitation/create", params: { message: "Go?" } } },
        nextPollAt: now + 1_000,
      })),
      seed("unanswered", 10 * minute, () => ({})),
      // Settled, but a stray task of it is still to cancel, and tasks/cancel failed three times.
      seed("stray", 40 * minute, (now) => ({
        status: "cancelled" as const,
        settledAt: now - 20 * minute,
        strayTasks: [
          HandleRecord.StrayTask.make({
            taskId: "task-stray-0000000000",
            receivedAt: now - 20 * minute,
            cancelSent: false,
            cancelFailures: 3,
          }),
        ],
        leaseOwner: null,
        leaseExpiresAt: null,
        nextPollAt: now + 10_000,
      })),
      seed("fresh", 0, () => ({})),
      // Another tenant's call under a key the default scope uses too: only --all-scopes shows it.
      Effect.flatMap(HandleStore.HandleStore, (store) =>
        store.insertOrGet({ ...seedCall("fresh", Date.now() - 2 * minute), scope: "acme" }),
      ),
    ]).pipe(Effect.provide(SqliteStore.layer({ filename: join(ws.dir, ".mcp-handles", "tasks.db") }))),
  )
})

afterAll(() => {
  ws?.dispose()
})

describe("list for on-call", () => {
  it("shows who drives each call, its last and next poll and its age", async () => {
    const ran = await ws.run("list", "--status", "open")
    expect(ran.code, ran.stderr).toBe(0)
    const lines = ran.stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(
      /^KEY\s+STATUS\s+TOOL\s+SERVER\s+TASK\s+OWNER\s+LAST POLL\s+NEXT POLL\s+POLLS\s+AGE\s+NOTE$/,
    )
    expect(lines.find((l) => l.startsWith("healthy"))).toMatch(
      /^healthy\s+working\s+report\s+research\s+task…00\s+worker-1\s+\d+s ago\s+in (9|10)m\s+3\s+\d+s\s+working$/,
    )
    // The dead worker's lease ran out: it drives nothing any more.
    expect(lines.find((l) => l.startsWith("orphaned"))).toMatch(
      /^orphaned\s+working\s+.*\s+-\s+6m ago\s+5m ago\s+0\s+30m\s/,
    )
  })

  it("--stuck keeps the calls that need someone, each with the reason", async () => {
    // Stuck calls found: exit 3, so cron or CI can alert on it.
    const ran = await ws.run("list", "--stuck")
    expect(ran.code, ran.stderr).toBe(3)
    const notes = Object.fromEntries(
      ran.stdout
        .trimEnd()
        .split("\n")
        .slice(1)
        .map((line) => [line.split(/\s+/)[0], line]),
    )
    expect(Object.keys(notes).sort()).toEqual(["asking", "orphaned", "refused", "stray", "unanswered"])
    expect(notes.orphaned).toMatch(
      /not polled for 5m past its due time; the lease of worker-7 ran out 5m ago: no process is driving it/,
    )
    expect(notes.refused).toMatch(/6 failed attempts in a row: unauthorized: HTTP 401/)
    expect(notes.asking).toMatch(/waiting 20m for input \(confirm\)/)
    expect(notes.unanswered).toMatch(/no answer to tools\/call for 10m/)
    expect(notes.stray).toMatch(/1 stray task\(s\) still to cancel after 3 failed tasks\/cancel/)
    // The stray's id is a bearer credential like any task id: never in the note.
    expect(ran.stdout).not.toContain("task-stray-0000000000")

    const json = await ws.run("list", "--stuck", "--json")
    expect(json.code, json.stderr).toBe(3)
    // Nothing stuck: exit 0.
    const calm = await ws.run("list", "--stuck", "--scope", "quiet")
    expect([calm.code, calm.stdout]).toEqual([0, "no stuck calls in scope quiet\n"])
    const rows = Schema.decodeUnknownSync(Output.List, { onExcessProperty: "error" })(JSON.parse(json.stdout))
    expect(rows.map((r) => [r.key, r.stuck === null])).toEqual([
      ["orphaned", false],
      ["refused", false],
      ["asking", false],
      ["unanswered", false],
      ["stray", false],
    ])
    expect(rows.find((r) => r.key === "orphaned")).toMatchObject({ owner: null, server: "research" })
  })

  it("counts the polls the server answered (POLLS, polls in JSON)", async () => {
    const json = await ws.run("list", "--json")
    const rows = Schema.decodeUnknownSync(Output.List, { onExcessProperty: "error" })(JSON.parse(json.stdout))
    expect(rows.find((r) => r.key === "healthy")?.polls).toBe(3)
    expect(rows.find((r) => r.key === "fresh")?.polls).toBe(0)
  })

  it("--all-scopes shows every scope's calls, the scope first", async () => {
    const one = await ws.run("list")
    expect(one.stdout).not.toMatch(/acme/)
    const all = await ws.run("list", "--all-scopes")
    expect(all.code, all.stderr).toBe(0)
    const [header, ...lines] = all.stdout.trimEnd().split("\n")
    expect(header).toMatch(
      /^SCOPE\s+KEY\s+STATUS\s+TOOL\s+SERVER\s+TASK\s+OWNER\s+LAST POLL\s+NEXT POLL\s+POLLS\s+AGE\s+NOTE$/,
    )
    // Every call of both scopes, the settled one too.
    expect(lines).toHaveLength(8)
    // The same key in two scopes: two rows, told apart by the scope.
    expect(
      lines
        .filter((l) => /^\S+\s+fresh\s/.test(l))
        .map((l) => l.split(/\s+/)[0])
        .sort(),
    ).toEqual(["acme", "default"])
    const json = await ws.run("list", "--all-scopes", "--status", "open", "--json")
    const rows = Schema.decodeUnknownSync(Output.List)(JSON.parse(json.stdout))
    expect(rows.map((r) => `${r.scope}/${r.key}`)).toContain("acme/fresh")
    expect(rows).toHaveLength(7)
  })
})
