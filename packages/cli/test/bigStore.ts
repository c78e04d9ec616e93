/**
 * A store of more than 10,000 calls whose oldest rows carry task ids and markup wherever a row
 * can: a legacy key `adopted:{taskId}`, a key that is a form, status messages, last problems,
 * errors and results quoting their task id (and a related-task `_meta` reference). Written
 * straight into a SQLite file through the store API, all at once, so the store's batching
 * commits them together (a few seconds rather than minutes).
 */
import { randomUUID } from "node:crypto"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Effect from "effect/Effect"
import { expect } from "vitest"
import { seedCall } from "./support.js"

/** A key made of markup: were it inserted as HTML, the page would get a form that cancels `victim`. */
export const markupKey =
  '<form method="post" action="/call/action" id="evil-form"><input type="hidden" name="key" value="victim"><input type="hidden" name="action" value="cancel"><button id="evil-button">Cancel…</button></form>'

/** Markup in a row's text: an element the page must never get. */
export const markup = (id: string) => `<b id="${id}">bold</b><img src="/x" id="${id}-img">`

export interface BigStore {
  readonly file: string
  /** Every task id in the store; none may be shown whole. */
  readonly ids: ReadonlyArray<string>
  /** The oldest rows' ids: the first a capped redaction forgets. */
  readonly legacy: { readonly key: string; readonly taskId: string }
  readonly quoted: { readonly key: string; readonly taskId: string }
  readonly markedUp: { readonly key: string; readonly taskId: string }
  readonly failed: { readonly key: string; readonly taskId: string }
  /** How many calls the store holds. */
  readonly rows: number
}

/** Rows after the oldest ones, each with a task id of its own. */
export const fillerRows = 10_050

/** Fails naming the output that holds a full id. */
export const expectNoIds = (ids: ReadonlyArray<string>, output: string, where: string) => {
  for (const id of ids) {
    const at = output.indexOf(id)
    expect(at, `task id ${id} in ${where}: …${output.slice(Math.max(0, at - 200), at + 100)}…`).toBe(-1)
  }
}

const snapshot = (now: number, statusMessage: string) =>
  HandleRecord.TaskSnapshot.make({
    statusMessage,
    pollIntervalMs: 1_000,
    ttlMs: null,
    createdAt: now,
    lastUpdatedAt: now,
    receivedAt: now,
  })

/** Writes the store under `dir/.mcp-handles/tasks.db` (the default store of a workspace there). */
export const seedBigStore = async (dir: string): Promise<BigStore> => {
  mkdirSync(join(dir, ".mcp-handles"), { recursive: true })
  const file = join(dir, ".mcp-handles", "tasks.db")
  const legacyId = randomUUID()
  const legacy = { key: `adopted:${legacyId}`, taskId: legacyId }
  const quoted = { key: "quoted-1", taskId: randomUUID() }
  const markedUp = { key: markupKey, taskId: randomUUID() }
  const failed = { key: "failed-1", taskId: randomUUID() }
  const start = Date.now() - 3_600_000
  const fillers = Array.from({ length: fillerRows }, (_, i) => ({
    key: `row-${String(i).padStart(5, "0")}`,
    taskId: randomUUID(),
  }))
  const write = (
    key: string,
    createdAt: number,
    fields: (now: number) => Partial<HandleRecord.HandleRecord>,
  ) =>
    Effect.gen(function* () {
      const store = yield* HandleStore.HandleStore
      const { record } = yield* store.insertOrGet(seedCall(key, createdAt))
      yield* store.update(new HandleRecord.HandleRecord({ ...record, ...fields(Date.now()) }))
    })
  const open = (taskId: string, message: string, problem: string) => (now: number) => ({
    status: "working" as const,
    taskId,
    snapshot: snapshot(now, message),
    lastProblem: problem,
    nextPollAt: now + 3_600_000,
  })
  await Effect.runPromise(
    Effect.all(
      [
        // The oldest first: the ids a redaction keeping the last 10,000 has forgotten by the end.
        write(
          legacy.key,
          start,
          open(legacy.taskId, `working on ${legacy.taskId}`, `no answer about task ${legacy.taskId}`),
        ),
        write(quoted.key, start + 1, (now) => ({
          status: "completed" as const,
          taskId: quoted.taskId,
          snapshot: snapshot(now, `finished ${quoted.taskId} ${markup("evil-status")}`),
          result: {
            content: [{ type: "text", text: `done: task ${quoted.taskId} ${markup("evil-result")}` }],
            _meta: { "io.modelcontextprotocol/related-task": { taskId: quoted.taskId } },
          },
          lastProblem: `task ${quoted.taskId} answered late ${markup("evil-problem")}`,
          settledAt: now,
          nextPollAt: null,
        })),
        write(
          markedUp.key,
          start + 2,
          open(markedUp.taskId, `working ${markup("evil-message")}`, `slow ${markup("evil-note")}`),
        ),
        write(failed.key, start + 3, (now) => ({
          status: "failed" as const,
          taskId: failed.taskId,
          error: HandleRecord.RpcError.make({
            code: -32603,
            message: `task ${failed.taskId} failed ${markup("evil-error")}`,
          }),
          settledAt: now,
          nextPollAt: null,
        })),
        ...fillers.map((row, i) =>
          write(row.key, start + 10 + i, (now) => ({
            status: "completed" as const,
            taskId: row.taskId,
            snapshot: snapshot(now, `done with ${row.taskId}`),
            settledAt: now,
            nextPollAt: null,
          })),
        ),
      ],
      { concurrency: 512, discard: true },
    ).pipe(Effect.provide(SqliteStore.layer({ filename: file, synchronous: "NORMAL" }))),
  )
  return {
    file,
    ids: [legacy.taskId, quoted.taskId, markedUp.taskId, failed.taskId, ...fillers.map((f) => f.taskId)],
    legacy,
    quoted,
    markedUp,
    failed,
    rows: 4 + fillers.length,
  }
}
