/**
 * B1's and B2's raw side: better-sqlite3 doing the same durable writes as the store, on a file
 * with the store's schema. Shared by the timed benchmark (`sqlite-bench.ts`) and the instruction
 * count (`b1-instructions.ts`), so both measure the same statements.
 */
import type { SqliteStore } from "@mcp-handles/store-sqlite"
import Database from "better-sqlite3"
import { callArguments, nextKey, T0 } from "./call.js"

/** The same two durable commits with the raw driver: same table, same row, same JSON body. */
/** One call after another (`call`), or `n` calls in two transactions (`calls`). */
export interface RawDriver {
  readonly call: () => void
  readonly calls: (n: number) => void
  readonly close: () => void
}

export const rawDriver = (filename: string, synchronous: SqliteStore.Synchronous): RawDriver => {
  const db = new Database(filename)
  db.pragma("journal_mode = WAL")
  db.pragma(`synchronous = ${synchronous}`)
  const columns =
    "scope, key, server_id, status, next_poll_at, lease_owner, lease_expires_at, version, created_at, settled_at, body, task_id"
  const insert = db.prepare(
    `INSERT INTO handles (${columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (scope, key) DO NOTHING`,
  )
  const update = db.prepare(`UPDATE handles SET server_id = ?, status = ?, next_poll_at = ?, lease_owner = ?,
    lease_expires_at = ?, version = ?, created_at = ?, settled_at = ?, body = ?, task_id = ?
    WHERE scope = ? AND key = ? AND version = ?`)
  const begin = db.transaction((params: Array<unknown>) => insert.run(...params))
  const write = db.transaction((params: Array<unknown>) => {
    if (update.run(...params).changes !== 1) throw new Error("lost CAS")
  })
  const body = (key: string, taskId: string | null) =>
    JSON.stringify({
      tool: "slow_compute",
      arguments: callArguments(),
      argumentsHash: "0f".repeat(32),
      taskId,
      snapshot: null,
      result: null,
      error: null,
      inputRequests: null,
      answers: {},
      stuckSince: null,
      cancel: null,
      attempts: 0,
      pollsWithoutInterval: 0,
      launches: 1,
      lastProblem: null,
      updatedAt: key === "" ? 0 : T0,
    })
  const intent = (key: string) => [
    "bench",
    key,
    "srv-1",
    "pending",
    T0 + 30_000,
    "bench",
    T0 + 30_000,
    1,
    T0,
    null,
    body(key, null),
    null,
  ]
  const recorded = (key: string) => [
    "srv-1",
    "working",
    T0 + 1000,
    "bench",
    T0 + 30_000,
    2,
    T0,
    null,
    body(key, `task-${key}`),
    `task-${key}`,
    "bench",
    key,
    1,
  ]
  /** One call: two transactions, two durable commits. */
  const call = () => {
    const key = nextKey()
    begin.immediate(intent(key))
    write.immediate(recorded(key))
  }
  /** `n` calls group-committed by hand: all intents in one transaction, all task ids in another. */
  const batch = db.transaction((params: ReadonlyArray<Array<unknown>>, statement: Database.Statement) => {
    for (const p of params) statement.run(...p)
  })
  const calls = (n: number) => {
    const keys = Array.from({ length: n }, nextKey)
    batch.immediate(keys.map(intent), insert)
    batch.immediate(keys.map(recorded), update)
  }
  return { call, calls, close: () => db.close() }
}
