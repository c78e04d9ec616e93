/**
 * The records this process last wrote, so that reading back an unchanged row skips its Schema
 * decode. A driver reads its row before every poll, and the row is almost always the one it
 * wrote after the last poll; the decode of that row was the largest part of the durable store's
 * CPU per poll (BENCHMARKS.md, B8).
 *
 * A kept record is returned only for a row that matches it in every column and in its body's
 * length and hash: a row written since by anyone (another instance, another process, a hand
 * edit) decodes as it would without the cache. Every write of a row bumps its version, so the
 * hash only guards against writes outside the store.
 *
 * Only open rows are kept (a resting row is not driven, so not read before a poll), at most
 * `capacity` of them, the least recently written dropped first.
 */
import { type HandleRecord, isOpen } from "@mcp-handles/core/HandleRecord"
import type * as Rows from "./rows.js"

interface Entry {
  readonly record: HandleRecord
  readonly bodyLength: number
  readonly bodyHash: number
}

export interface RecordCache {
  /** Keeps `record`, just committed with `body` as its body; forgets its row when it rests. */
  readonly remember: (record: HandleRecord, body: string) => void
  /** The kept record if `row` is exactly the row it was written as. */
  readonly recall: (row: Rows.Row) => HandleRecord | undefined
}

/** FNV-1a over the UTF-16 code units: a few microseconds for a row's body, no allocation. */
const hash = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

/** Unambiguous for any scope and key, NUL characters included. */
const idOf = (scope: string, key: string) => `${scope.length}:${scope}${key}`

const matches = (record: HandleRecord, row: Rows.Row): boolean =>
  row.version === record.version &&
  row.next_poll_at === record.nextPollAt &&
  row.lease_owner === record.leaseOwner &&
  row.lease_expires_at === record.leaseExpiresAt &&
  row.status === record.status &&
  row.created_at === record.createdAt &&
  row.settled_at === record.settledAt &&
  row.server_id === record.serverId

export const make = (capacity: number): RecordCache => {
  const entries = new Map<string, Entry>()
  if (capacity <= 0) return { remember: () => {}, recall: () => undefined }
  return {
    remember: (record, body) => {
      const id = idOf(record.scope, record.key)
      // Deleted first so that the entry moves to the end: the oldest write is evicted first.
      entries.delete(id)
      if (!isOpen(record.status)) return
      entries.set(id, { record, bodyLength: body.length, bodyHash: hash(body) })
      if (entries.size > capacity) {
        const oldest = entries.keys().next()
        if (oldest.done !== true) entries.delete(oldest.value)
      }
    },
    recall: (row) => {
      if (typeof row.scope !== "string" || typeof row.key !== "string" || typeof row.body !== "string") {
        return undefined
      }
      const entry = entries.get(idOf(row.scope, row.key))
      if (entry === undefined || !matches(entry.record, row)) return undefined
      if (row.body.length !== entry.bodyLength || hash(row.body) !== entry.bodyHash) return undefined
      return entry.record
    },
  }
}
