/**
 * A copy of a `HandleRecord` with some fields changed, made without `Schema.Class`'s constructor:
 * for `EncryptedStore`, whose every write copies a record two or three times (the sealed one for
 * the store, the clear answer to the caller). The constructor spreads its argument again, walks
 * every field for defaults (`lazilyMergeDefaults`) and copies with `Object.assign`: about 3 µs a
 * copy, against 0.1 µs for the assignments below (B1, issue 32).
 *
 * The copy is what `new HandleRecord({ ...base, ...changes }, true)` makes from a record: an
 * instance of the class (same prototype, so `instanceof`, `Equal` and the schema's `is` hold)
 * with every field as an own property, in V8's fast mode (named assignments, not `Object.assign`:
 * see `HandleRecord`'s constructor). `base` is a record, so every field with
 * a default is already set. No field of a record holds `undefined`: an undefined change keeps
 * the base's value. `HandleRecord.test.ts` checks that the copy has every field of the class.
 */
import { HandleRecord } from "../HandleRecord.js"

type Mutable = { -readonly [K in keyof HandleRecord]: HandleRecord[K] }

/** The fields of a record, each of which a copy may change (undefined: kept). */
export type Changes = { readonly [K in keyof Mutable]?: Mutable[K] | undefined }

/** `base` with `changes`, as a new record (see the module's notes). */
export const copyRecord = (base: HandleRecord, changes: Changes): HandleRecord => {
  // An object of the class without running its constructor. Not `Reflect.construct(Object, [],
  // HandleRecord)`: objects from the class's own initial map, filled in another order than the
  // constructor fills them, made every construction slower (B1 over memory: 150 -> 265 µs a call).
  const copy = Object.create(HandleRecord.prototype) as Mutable
  // Named assignments in the class's field order: V8 keeps them in-object (fast properties).
  copy.scope = changes.scope ?? base.scope
  copy.key = changes.key ?? base.key
  copy.serverId = changes.serverId ?? base.serverId
  copy.tool = changes.tool ?? base.tool
  copy.arguments = changes.arguments === undefined ? base.arguments : changes.arguments
  copy.argumentsHash = changes.argumentsHash ?? base.argumentsHash
  copy.taskId = changes.taskId === undefined ? base.taskId : changes.taskId
  copy.status = changes.status ?? base.status
  copy.snapshot = changes.snapshot === undefined ? base.snapshot : changes.snapshot
  copy.result = changes.result === undefined ? base.result : changes.result
  copy.error = changes.error === undefined ? base.error : changes.error
  copy.inputRequests = changes.inputRequests === undefined ? base.inputRequests : changes.inputRequests
  copy.answers = changes.answers ?? base.answers
  copy.stuckSince = changes.stuckSince === undefined ? base.stuckSince : changes.stuckSince
  copy.cancel = changes.cancel === undefined ? base.cancel : changes.cancel
  copy.strayTasks = changes.strayTasks ?? base.strayTasks
  copy.nextPollAt = changes.nextPollAt === undefined ? base.nextPollAt : changes.nextPollAt
  copy.attempts = changes.attempts ?? base.attempts
  copy.pollsWithoutInterval = changes.pollsWithoutInterval ?? base.pollsWithoutInterval
  copy.launches = changes.launches ?? base.launches
  copy.polls = changes.polls ?? base.polls
  copy.lastProblem = changes.lastProblem === undefined ? base.lastProblem : changes.lastProblem
  copy.leaseOwner = changes.leaseOwner === undefined ? base.leaseOwner : changes.leaseOwner
  copy.leaseExpiresAt = changes.leaseExpiresAt === undefined ? base.leaseExpiresAt : changes.leaseExpiresAt
  copy.version = changes.version ?? base.version
  copy.createdAt = changes.createdAt ?? base.createdAt
  copy.updatedAt = changes.updatedAt ?? base.updatedAt
  copy.settledAt = changes.settledAt === undefined ? base.settledAt : changes.settledAt
  copy.progress = changes.progress === undefined ? base.progress : changes.progress
  copy.history = changes.history ?? base.history
  return copy
}
