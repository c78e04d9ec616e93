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

/**
 * Makes the copy. A constructor of its own, not `Object.create(HandleRecord.prototype)`: V8 sizes
 * a constructor's objects by the `this.x =` assignments in it, so every field is in-object, as
 * in a record the class made. An `Object.create` copy kept 26 of its 30 fields out of line, and
 * so did every spread of it downstream (a driver's `bump`, a caller's next record), whose copies
 * then took V8's slow path (B1 under callgrind: about 96 k instructions a call in
 * `Runtime_SetDataProperties`). Not `Reflect.construct(Object, [], HandleRecord)` either: objects
 * from the class's own initial map, filled in another order than its constructor fills them,
 * made every construction slower. Its prototype is the class's: the copy is a `HandleRecord`.
 */
const RecordCopy = function (this: Mutable, base: HandleRecord, changes: Changes) {
  this.scope = changes.scope ?? base.scope
  this.key = changes.key ?? base.key
  this.serverId = changes.serverId ?? base.serverId
  this.tool = changes.tool ?? base.tool
  this.arguments = changes.arguments === undefined ? base.arguments : changes.arguments
  this.argumentsHash = changes.argumentsHash ?? base.argumentsHash
  this.taskId = changes.taskId === undefined ? base.taskId : changes.taskId
  this.status = changes.status ?? base.status
  this.snapshot = changes.snapshot === undefined ? base.snapshot : changes.snapshot
  this.result = changes.result === undefined ? base.result : changes.result
  this.error = changes.error === undefined ? base.error : changes.error
  this.inputRequests = changes.inputRequests === undefined ? base.inputRequests : changes.inputRequests
  this.answers = changes.answers ?? base.answers
  this.stuckSince = changes.stuckSince === undefined ? base.stuckSince : changes.stuckSince
  this.cancel = changes.cancel === undefined ? base.cancel : changes.cancel
  this.strayTasks = changes.strayTasks ?? base.strayTasks
  this.nextPollAt = changes.nextPollAt === undefined ? base.nextPollAt : changes.nextPollAt
  this.attempts = changes.attempts ?? base.attempts
  this.pollsWithoutInterval = changes.pollsWithoutInterval ?? base.pollsWithoutInterval
  this.launches = changes.launches ?? base.launches
  this.polls = changes.polls ?? base.polls
  this.lastProblem = changes.lastProblem === undefined ? base.lastProblem : changes.lastProblem
  this.leaseOwner = changes.leaseOwner === undefined ? base.leaseOwner : changes.leaseOwner
  this.leaseExpiresAt = changes.leaseExpiresAt === undefined ? base.leaseExpiresAt : changes.leaseExpiresAt
  this.version = changes.version ?? base.version
  this.createdAt = changes.createdAt ?? base.createdAt
  this.updatedAt = changes.updatedAt ?? base.updatedAt
  this.settledAt = changes.settledAt === undefined ? base.settledAt : changes.settledAt
  this.progress = changes.progress === undefined ? base.progress : changes.progress
  this.history = changes.history ?? base.history
} as unknown as new (
  base: HandleRecord,
  changes: Changes,
) => HandleRecord
RecordCopy.prototype = HandleRecord.prototype

/** `base` with `changes`, as a new record (see the module's notes). */
export const copyRecord = (base: HandleRecord, changes: Changes): HandleRecord =>
  new RecordCopy(base, changes)
