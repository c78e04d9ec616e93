/**
 * Encryption at rest for any store (issue 32, item 2): a decorator over a `HandleStore` that
 * seals a row's secrets before each write and opens them after each read, so that memory,
 * SQLite, Postgres and a third party's store get it from one place and no driver changes.
 *
 * Sealed: the task id and stray task ids (deterministically, see `Encryption`: the stored value
 * is a function of the id and the key, so the unique index, adoption and duplicate-id detection
 * keep working on it), the arguments and their hash (unkeyed, it would let a copy of the file
 * guess arguments of little entropy), the result, the input requests, the answers and the
 * 2025-11-25 session. Each sealed value still has its field's shape (a string, or an object
 * holding the envelope under `sealedField`), so every store decodes a sealed row like any other
 * and the SQL that reads a row's plain parts (`cancelSent`, `launches`, intervals) is unchanged.
 *
 * Left in clear: what the store itself schedules, leases and lists by (scope, key, server id,
 * status, times, versions), the tool name, errors, the status message, the last problem,
 * progress and history. Those free texts are kept readable without the key, but a server may
 * quote the task id in them: each of the row's task ids is taken out of them before the write
 * and put back after the read (`internal/idText`), so the stored text says `⟪task id⟫` where
 * the server named it. A row written before encryption was on reads back as it is (a field
 * that is not sealed is taken as clear) and is sealed at its next write or by `rekey`.
 *
 * ```ts
 * const store = EncryptedStore.layer(SqliteStore.layer(), Encryption.layerEnv("MCP_HANDLES_KEY"))
 * ```
 *
 * @since 0.5.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as CallStore from "./CallStore.js"
import * as Encryption from "./Encryption.js"
import { HandleRecord, InputAnswer, Progress, RpcError, StrayTask, TaskSnapshot } from "./HandleRecord.js"
import * as HandleStore from "./HandleStore.js"
import { BoundedCache } from "./internal/boundedCache.js"
import * as IdText from "./internal/idText.js"
import * as Sealer from "./internal/sealer.js"
import type { JsonObject, JsonValue } from "./Json.js"
import * as ToolResult from "./ToolResult.js"

/**
 * The key under which an object-shaped field holds its envelope.
 *
 * @since 0.5.0
 * @category constants
 */
export const sealedField = "mcp-handles/sealed"

const sealedObject = (envelope: string): JsonObject => ({ [sealedField]: envelope })

/**
 * `record` with `changes`, built by the class without re-validating. Not a hand-made copy (one
 * without `Schema.Class`'s constructor was 30 times cheaper alone): its objects had maps the
 * class's own never share, and a driver's copy of one (`{ ...record }` in `bump`, in
 * `initialRecord`'s constructor) then went megamorphic and fell into dictionary mode, which cost
 * B1 under callgrind what the copies saved.
 */
const withFields = (record: HandleRecord, changes: Partial<HandleRecord>): HandleRecord =>
  new HandleRecord({ ...record, ...changes }, true)

const envelopeOf = (value: unknown): string | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  const envelope = (value as Record<string, unknown>)[sealedField]
  return Encryption.isEnvelope(envelope) ? envelope : undefined
}

/**
 * What a sealed field is bound to (its AES-GCM additional data): the row and the field, so that
 * a value copied into another row, or into another field of its row, does not open.
 */
const contextOf = (scope: string, key: string, field: string): string => JSON.stringify([scope, key, field])

/**
 * The contexts of one row's fields, the row's part serialised once: the same text `contextOf`
 * gives (a field's name is a plain identifier, so its JSON is itself in quotes).
 */
const rowContexts = (scope: string, key: string): ((field: SealedField) => string) => {
  const row = JSON.stringify([scope, key]).slice(0, -1)
  return (field) => `${row},"${field}"]`
}

/** The fields whose context binds an envelope (`contextOf`'s third part). */
type SealedField = "arguments" | "argumentsHash" | "result" | "inputRequests" | "answers" | "session"

/**
 * What each clear value was last sealed as, by the clear object itself: records are immutable,
 * and a write that leaves a field as it was passes the same object on, so that field's stored
 * envelope is reused instead of sealed again. Only an envelope bound to the same row and field
 * under the current key is reused.
 */
type Memo = WeakMap<object, { readonly context: string; readonly keyId: string; readonly sealed: string }>

const memos = new WeakMap<Encryption.Encryption, Memo>()

const memoOf = (encryption: Encryption.Encryption): Memo => {
  let memo = memos.get(encryption)
  if (memo === undefined) {
    memo = new WeakMap()
    memos.set(encryption, memo)
  }
  return memo
}

const remember = (memo: Memo, clear: unknown, context: string, sealed: string) => {
  // Only what the current format wrote: an `mhe1.` envelope is sealed again at the next write.
  if (typeof clear !== "object" || clear === null) return
  if (!sealed.startsWith(Encryption.prefixes.boundEnvelope)) return
  Option.map(Encryption.keyIdOf(sealed), (keyId) => memo.set(clear, { context, keyId, sealed }))
}

/**
 * What each row's arguments' hash was last sealed as or opened from, by the row's context (a
 * string cannot key a `WeakMap`): every write of a row carries its hash and every read opens it,
 * and each would otherwise cost a cipher call. One entry a row, keyed by the context alone (not
 * by key id, context and hash joined: building and hashing that text on every write cost more
 * than the lookup saved). Bounded: past it, a hash is sealed or opened again.
 */
interface KnownHash {
  /** The key that sealed it: only one under the current key is reused by a write. */
  readonly keyId: string
  readonly hash: string
  readonly sealed: string
}

const hashMemos = new WeakMap<Encryption.Encryption, BoundedCache<string, KnownHash>>()

const hashMemoOf = (encryption: Encryption.Encryption): BoundedCache<string, KnownHash> => {
  let memo = hashMemos.get(encryption)
  if (memo === undefined) {
    memo = new BoundedCache(10_000)
    hashMemos.set(encryption, memo)
  }
  return memo
}

/** The stored form of an arguments' hash, when this process sealed or opened it before. */
const knownHash = (encryption: Encryption.Encryption, context: string, hash: string): string | undefined => {
  const known = hashMemoOf(encryption).get(context)
  return known !== undefined && known.keyId === encryption.currentKeyId && known.hash === hash
    ? known.sealed
    : undefined
}

/** The clear hash of an envelope bound to `context` (AES-GCM opens the same text the same way). */
const openHash = (
  encryption: Encryption.Encryption,
  context: string,
  sealed: string,
): Effect.Effect<string, Encryption.MissingKey | Encryption.DecryptFailed> => {
  const known = hashMemoOf(encryption).get(context)
  if (known !== undefined && known.sealed === sealed) return Effect.succeed(known.hash)
  return Effect.tap(encryption.decryptString(sealed, context), (hash) => {
    // Only what the current format wrote; remembered under the key that sealed it, so that one
    // under an older key is sealed again at the next write.
    if (!sealed.startsWith(Encryption.prefixes.boundEnvelope)) return
    Option.map(Encryption.keyIdOf(sealed), (keyId) =>
      hashMemoOf(encryption).set(context, { keyId, hash, sealed }),
    )
  })
}

/**
 * One value a write seals: a task id (deterministic), the arguments' hash (remembered in
 * `hashMemos`) or a JSON value (remembered in the memo by its clear object), under its context.
 */
type Job =
  | { readonly _tag: "TaskId"; readonly taskId: string }
  | { readonly _tag: "Hash"; readonly hash: string; readonly context: string }
  | { readonly _tag: "Session"; readonly session: string; readonly context: string }
  | { readonly _tag: "Json"; readonly clear: object; readonly value: unknown; readonly context: string }

/**
 * A write's sealing, planned before anything is sealed: each field's stored text is known
 * already (a memo's) or the number of the job that seals it.
 */
type Sealing = string | number

class Plan {
  readonly jobs: Array<Job> = []
  constructor(
    readonly encryption: Encryption.Encryption,
    readonly memo: Memo,
    readonly context: (field: SealedField) => string,
  ) {}
  private add(job: Job): number {
    return this.jobs.push(job) - 1
  }
  taskId(taskId: string): Sealing {
    return this.add({ _tag: "TaskId", taskId })
  }
  hash(hash: string): Sealing {
    const context = this.context("argumentsHash")
    return knownHash(this.encryption, context, hash) ?? this.add({ _tag: "Hash", hash, context })
  }
  session(session: string): Sealing {
    return this.add({ _tag: "Session", session, context: this.context("session") })
  }
  /** `clear` sealed as `value` (itself unless given), or its envelope when it was sealed so. */
  json(clear: object, field: SealedField, value: (clear: object) => unknown = identity): Sealing {
    const context = this.context(field)
    const known = this.memo.get(clear)
    return known !== undefined && known.context === context && known.keyId === this.encryption.currentKeyId
      ? known.sealed
      : this.add({ _tag: "Json", clear, value: value(clear), context })
  }
}

const identity = (value: unknown) => value

const encodedResult = (result: object) => ToolResult.encode(result as ToolResult.CallToolResult)

/** How a job's value is sealed: `Encryption`'s effects, or the answers of `Encryption.make`'s sealer. */
interface SealOps<R> {
  readonly taskId: (taskId: string) => R
  readonly text: (plain: string, context: string) => R
  readonly json: (value: unknown, context: string) => R
}

const sealJob = <R>(sealing: SealOps<R>, job: Job): R => {
  switch (job._tag) {
    case "TaskId":
      return sealing.taskId(job.taskId)
    case "Hash":
      return sealing.text(job.hash, job.context)
    case "Session":
      return sealing.text(job.session, job.context)
    case "Json":
      return sealing.json(job.value, job.context)
  }
}

/** Through `Encryption`'s interface, for an `Encryption` without a sealer (called on it: a class's methods keep `this`). */
const throughInterface = (encryption: Encryption.Encryption): SealOps<Effect.Effect<string>> => ({
  taskId: (taskId) => encryption.encryptTaskId(taskId),
  text: (plain, context) => encryption.encryptString(plain, context),
  json: (value, context) => encryption.encryptJson(value, context),
})

/** On `Encryption.make`'s sealer: the same texts as through the interface, without an effect. */
const direct = (sealer: Sealer.Sealer): SealOps<Sealer.Answer<string>> => ({
  taskId: sealer.sealTaskId,
  text: sealer.sealString,
  json: (value, context) => sealer.sealString(JSON.stringify(value), context),
})

/** Every job, one after another, as the cipher answers: synchronously, or one promise in all. */
const sealAll = (sealer: Sealer.Sealer, jobs: ReadonlyArray<Job>): Sealer.Answer<Array<string>> => {
  const texts: Array<string> = []
  const sealing = direct(sealer)
  const next = (): Sealer.Answer<Array<string>> => {
    for (let job = jobs[texts.length]; job !== undefined; job = jobs[texts.length]) {
      const text = sealJob(sealing, job)
      if (!Sealer.isText(text)) {
        return text.then((sealed) => {
          texts.push(sealed)
          return next()
        })
      }
      texts.push(text)
    }
    return texts
  }
  return next()
}

/** What each sealed job's value was sealed as, for the next write of the same value. */
const rememberSealed = (plan: Plan, texts: ReadonlyArray<string>) => {
  const keyId = plan.encryption.currentKeyId
  plan.jobs.forEach((job, i) => {
    const sealed = texts[i] as string
    if (job._tag === "Json") plan.memo.set(job.clear, { context: job.context, keyId, sealed })
    if (job._tag === "Hash") hashMemoOf(plan.encryption).set(job.context, { keyId, hash: job.hash, sealed })
  })
}

/**
 * `build` of `plan`'s sealed texts (`text` gives a field's). With `Encryption.make`'s service and
 * a synchronous cipher (`NodeCipher`), every value of a write is sealed in this one effect step;
 * with WebCrypto, one suspension for all of them; with another `Encryption`, through its effects,
 * one value after another (forking a fiber per value cost more than it overlapped, on B1).
 */
const sealPlanned = <A>(plan: Plan, build: (text: (sealing: Sealing) => string) => A): Effect.Effect<A> => {
  const finish = (texts: ReadonlyArray<string>) => {
    rememberSealed(plan, texts)
    return build((sealing) => (typeof sealing === "string" ? sealing : (texts[sealing] as string)))
  }
  if (plan.jobs.length === 0) return Effect.succeed(finish([]))
  const sealer = Sealer.sealerOf(plan.encryption)
  if (sealer === undefined) {
    const sealing = throughInterface(plan.encryption)
    return Effect.map(
      Effect.forEach(plan.jobs, (job) => sealJob(sealing, job)),
      finish,
    )
  }
  const texts = sealAll(sealer, plan.jobs)
  return Array.isArray(texts) ? Effect.succeed(finish(texts)) : Effect.promise(() => texts.then(finish))
}

/**
 * Whether a field's value is sealed: a sealed task id or session, an object holding an envelope
 * (arguments, a result, input requests), or the answers' placeholder. What a reader without the
 * key shows as `encrypted`.
 *
 * @since 0.5.0
 * @category predicates
 */
export const isSealedValue = (value: unknown): boolean =>
  Encryption.isSealed(value) ||
  envelopeOf(value) !== undefined ||
  (typeof value === "object" &&
    value !== null &&
    typeof (value as Record<string, { readonly response?: unknown }>)[sealedField]?.response === "string")

/**
 * Whether any field of `record` is sealed, and under which keys (empty: a clear row).
 *
 * @since 0.5.0
 * @category utils
 */
export const keyIds = (record: HandleRecord): ReadonlySet<string> => {
  const ids = new Set<string>()
  const add = (value: string | undefined | null) => {
    if (typeof value === "string") Option.map(Encryption.keyIdOf(value), (id) => ids.add(id))
  }
  add(record.taskId)
  add(record.argumentsHash)
  add(envelopeOf(record.arguments))
  add(envelopeOf(record.result))
  add(envelopeOf(record.inputRequests))
  const answer = record.answers[sealedField]
  add(answer !== undefined && typeof answer.response === "string" ? answer.response : undefined)
  add(record.snapshot?.session)
  for (const stray of record.strayTasks) add(stray.taskId)
  return ids
}

/**
 * The free texts of `record` passed through `f` (the status message, the error's message and
 * data, the last problem, the progress message): only the fields `f` changed are new objects,
 * and nothing is built for a row without a text or without a task id.
 */
const mapTexts = (
  record: HandleRecord,
  ids: ReadonlyArray<string | null>,
  f: (ids: IdText.RowIds, text: string) => string,
): Partial<HandleRecord> | undefined => {
  if (!hasTexts(record) || ids.every((id) => id === null)) return undefined
  const statusMessage = record.snapshot?.statusMessage
  const error = record.error
  const progressMessage = record.progress?.message
  const rowIds = new IdText.RowIds(ids)
  const changes: { -readonly [K in keyof HandleRecord]?: HandleRecord[K] } = {}
  if (statusMessage !== undefined && record.snapshot !== null) {
    const text = f(rowIds, statusMessage)
    if (text !== statusMessage)
      changes.snapshot = new TaskSnapshot({ ...record.snapshot, statusMessage: text }, true)
  }
  if (error !== null) {
    const message = f(rowIds, error.message)
    const data =
      error.data === undefined ? undefined : IdText.mapStrings(error.data, (text) => f(rowIds, text))
    if (message !== error.message || data !== error.data)
      changes.error = new RpcError({ ...error, message, ...(data === undefined ? {} : { data }) }, true)
  }
  if (record.lastProblem !== null) {
    const text = f(rowIds, record.lastProblem)
    if (text !== record.lastProblem) changes.lastProblem = text
  }
  if (progressMessage !== undefined && record.progress !== null) {
    const text = f(rowIds, progressMessage)
    if (text !== progressMessage) changes.progress = new Progress({ ...record.progress, message: text }, true)
  }
  return Object.keys(changes).length === 0 ? undefined : changes
}

const idsOf = (taskId: string | null, strays: ReadonlyArray<StrayTask>): ReadonlyArray<string | null> =>
  strays.length === 0 ? [taskId] : [taskId, ...strays.map((stray) => stray.taskId)]

const hasTexts = (record: HandleRecord): boolean =>
  record.snapshot?.statusMessage !== undefined ||
  record.error !== null ||
  record.lastProblem !== null ||
  record.progress?.message !== undefined

/** Whether a stored row's free texts quote one of `clear`'s task ids (written before they were taken out). */
const quotesIds = (stored: HandleRecord, clear: HandleRecord): boolean => {
  const texts = [
    stored.snapshot?.statusMessage,
    stored.error?.message,
    stored.error?.data === undefined ? undefined : JSON.stringify(stored.error.data),
    stored.lastProblem,
    stored.progress?.message,
  ]
  const ids = new IdText.RowIds(idsOf(clear.taskId, clear.strayTasks))
  return texts.some((text) => typeof text === "string" && ids.quotes(text))
}

/** `record`'s free texts with its task ids taken out (see the module's notes). */
const hideIds = (record: HandleRecord): Partial<HandleRecord> | undefined =>
  mapTexts(record, idsOf(record.taskId, record.strayTasks), (ids, text) => ids.hide(text))

/**
 * `record` with its secrets sealed under the current key (see the module's notes).
 *
 * @since 0.5.0
 * @category constructors
 */
export const seal = (encryption: Encryption.Encryption, record: HandleRecord): Effect.Effect<HandleRecord> =>
  Effect.suspend(() => {
    const plan = new Plan(encryption, memoOf(encryption), rowContexts(record.scope, record.key))
    // Planned in the order they were sealed in before: a field left as it was reuses its envelope.
    const taskId = record.taskId === null ? null : plan.taskId(record.taskId)
    const argumentsHash = plan.hash(record.argumentsHash)
    const args = record.arguments === null ? null : plan.json(record.arguments, "arguments")
    // Sealed as the server sent it (encoded): a block of a type this revision does not know
    // decodes back to the same `UnknownContent`.
    const result = record.result === null ? null : plan.json(record.result, "result", encodedResult)
    const inputRequests =
      record.inputRequests === null ? null : plan.json(record.inputRequests, "inputRequests")
    const answers = Object.keys(record.answers).length === 0 ? null : plan.json(record.answers, "answers")
    const session = record.snapshot?.session === undefined ? null : plan.session(record.snapshot.session)
    const strays = record.strayTasks.map((stray) => plan.taskId(stray.taskId))
    const texts = hideIds(record)
    const snapshot = texts?.snapshot ?? record.snapshot
    return sealPlanned(plan, (text) =>
      withFields(record, {
        ...texts,
        taskId: taskId === null ? null : text(taskId),
        arguments: args === null ? null : sealedObject(text(args)),
        argumentsHash: text(argumentsHash),
        result:
          result === null
            ? null
            : ({ content: [], ...sealedObject(text(result)) } as ToolResult.CallToolResult),
        inputRequests: inputRequests === null ? null : sealedObject(text(inputRequests)),
        // The placeholder is acknowledged once every answer is, so a store sees an answer still to
        // send without the key (`pendingIntents`).
        answers:
          answers === null
            ? record.answers
            : {
                [sealedField]: new InputAnswer(
                  {
                    response: text(answers),
                    acknowledged: Object.values(record.answers).every((answer) => answer.acknowledged),
                  },
                  true,
                ),
              },
        snapshot:
          session === null || snapshot === null
            ? snapshot
            : new TaskSnapshot({ ...snapshot, session: text(session) }, true),
        strayTasks:
          strays.length === 0
            ? record.strayTasks
            : record.strayTasks.map(
                (stray, i) => new StrayTask({ ...stray, taskId: text(strays[i] as Sealing) }, true),
              ),
      }),
    )
  })

/**
 * `record` with its sealed fields opened; a field that is not sealed is kept as it is (a row
 * written before encryption was on). A field sealed under a key this process lacks fails with
 * `MissingKey` naming the key; one that does not decrypt with `DecryptFailed`.
 *
 * @since 0.5.0
 * @category constructors
 */
export const open = (
  encryption: Encryption.Encryption,
  record: HandleRecord,
): Effect.Effect<HandleRecord, Encryption.MissingKey | Encryption.DecryptFailed> =>
  Effect.gen(function* () {
    const memo = memoOf(encryption)
    const context = (field: string) => contextOf(record.scope, record.key, field)
    const openJson = <A>(
      value: A,
      field: string,
    ): Effect.Effect<A, Encryption.MissingKey | Encryption.DecryptFailed> => {
      const envelope = envelopeOf(value)
      return envelope === undefined
        ? Effect.succeed(value)
        : Effect.tap(encryption.decryptJson(envelope, context(field)) as Effect.Effect<A, never>, (clear) =>
            remember(memo, clear, context(field), envelope),
          )
    }
    const openId = (id: string) =>
      id.startsWith(Encryption.prefixes.taskId) ? encryption.decryptTaskId(id) : Effect.succeed(id)
    const taskId = record.taskId === null ? null : yield* openId(record.taskId)
    // A row written before the hash was sealed has it in clear: kept as it is, sealed at its
    // next write or by `rekey`.
    const sealedHash = record.argumentsHash
    const argumentsHash = !Encryption.isEnvelope(sealedHash)
      ? sealedHash
      : yield* openHash(encryption, context("argumentsHash"), sealedHash)
    const args = yield* openJson(record.arguments, "arguments")
    const resultEnvelope = envelopeOf(record.result)
    const result =
      resultEnvelope === undefined
        ? record.result
        : yield* Effect.flatMap(encryption.decryptJson(resultEnvelope, context("result")), (json) =>
            Either.match(ToolResult.decode(json), {
              onLeft: () =>
                Effect.fail(
                  new Encryption.DecryptFailed({
                    keyId: Option.getOrElse(Encryption.keyIdOf(resultEnvelope), () => ""),
                    reason: "the result inside is not a tool result",
                  }),
                ),
              onRight: (clear) => {
                remember(memo, clear, context("result"), resultEnvelope)
                return Effect.succeed(clear)
              },
            }),
          )
    const inputRequests = yield* openJson(record.inputRequests, "inputRequests")
    const sealedAnswers = record.answers[sealedField]
    const answers =
      sealedAnswers !== undefined && typeof sealedAnswers.response === "string"
        ? yield* Effect.map(encryption.decryptJson(sealedAnswers.response, context("answers")), (stored) => {
            // Answers a writer without the key added beside the sealed ones are kept too.
            const { [sealedField]: _, ...clear } = record.answers
            const opened = {
              ...clear,
              ...Object.fromEntries(
                Object.entries(stored as Record<string, { response: JsonValue; acknowledged: boolean }>).map(
                  ([key, answer]) => [key, new InputAnswer(answer, true)],
                ),
              ),
            } as HandleRecord["answers"]
            if (Object.keys(clear).length === 0)
              remember(memo, opened, context("answers"), sealedAnswers.response as string)
            return opened
          })
        : record.answers
    const session = record.snapshot?.session
    const snapshot =
      session === undefined || !Encryption.isEnvelope(session) || record.snapshot === null
        ? record.snapshot
        : new TaskSnapshot(
            { ...record.snapshot, session: yield* encryption.decryptString(session, context("session")) },
            true,
          )
    const strayTasks =
      record.strayTasks.length === 0
        ? record.strayTasks
        : yield* Effect.forEach(record.strayTasks, (stray) =>
            Effect.map(openId(stray.taskId), (taskId) => new StrayTask({ ...stray, taskId }, true)),
          )
    // Only a row whose ids were sealed had its texts' ids taken out: a clear row's texts are as written.
    const texts = hidesIds(record)
    const opened = withFields(record, {
      taskId,
      arguments: args,
      argumentsHash,
      result,
      inputRequests,
      answers,
      snapshot,
      strayTasks,
    })
    if (!texts) return opened
    const revealed = mapTexts(opened, idsOf(taskId, strayTasks), (ids, text) => ids.reveal(text))
    return revealed === undefined ? opened : withFields(opened, revealed)
  })

/** Whether a stored row's texts had its ids taken out: it holds a sealed task id. */
const hidesIds = (record: HandleRecord): boolean =>
  record.taskId?.startsWith(Encryption.prefixes.taskId) === true ||
  record.strayTasks.some((stray) => stray.taskId.startsWith(Encryption.prefixes.taskId))

/**
 * A row that cannot be opened, as the store port reports it: a `StoreError` whose `cause` is the
 * `MissingKey` or `DecryptFailed`, its message naming the row and the key id (never a value).
 */
const openIn =
  (encryption: Encryption.Encryption, operation: string) =>
  (record: HandleRecord): Effect.Effect<HandleRecord, HandleStore.StoreError> =>
    Effect.mapError(
      open(encryption, record),
      (cause) =>
        new HandleStore.StoreError({
          operation,
          message: `row ${JSON.stringify(record.scope)}/${JSON.stringify(record.key)}: ${cause.message}`,
          cause,
        }),
    )

/**
 * The clear record a write returns: the store's answer (version, lease) with the clear fields
 * the caller gave, so a write costs no decryption.
 */
const overlay = (stored: HandleRecord, clear: HandleRecord): HandleRecord =>
  withFields(stored, {
    taskId: clear.taskId,
    arguments: clear.arguments,
    argumentsHash: clear.argumentsHash,
    result: clear.result,
    inputRequests: clear.inputRequests,
    answers: clear.answers,
    snapshot: clear.snapshot,
    strayTasks: clear.strayTasks,
    error: clear.error,
    lastProblem: clear.lastProblem,
    progress: clear.progress,
  })

/**
 * `store` with encryption at rest: every record written is sealed, every record read opened.
 *
 * @since 0.5.0
 * @category constructors
 */
export const make = (
  store: HandleStore.HandleStore,
  encryption: Encryption.Encryption,
): HandleStore.HandleStore =>
  HandleStore.HandleStore.of({
    ...store,
    insertOrGet: (handle: CallStore.NewHandle) =>
      Effect.suspend(() => {
        const plan = new Plan(encryption, memoOf(encryption), rowContexts(handle.scope, handle.key))
        const args = handle.arguments === null ? null : plan.json(handle.arguments, "arguments")
        const argumentsHash = plan.hash(handle.argumentsHash)
        return Effect.flatMap(
          sealPlanned(plan, (text) => ({
            ...handle,
            arguments: args === null ? null : sealedObject(text(args)),
            argumentsHash: text(argumentsHash),
          })),
          (sealed) =>
            Effect.flatMap(
              store.insertOrGet(sealed),
              (inserted): Effect.Effect<CallStore.InsertOrGetResult, HandleStore.StoreError> =>
                inserted.created
                  ? Effect.succeed({
                      created: true,
                      // The caller's clear values over the row as written: no decryption.
                      record: withFields(inserted.record, {
                        arguments: handle.arguments,
                        argumentsHash: handle.argumentsHash,
                      }),
                    })
                  : Effect.map(openIn(encryption, "insertOrGet")(inserted.record), (record) => ({
                      created: false,
                      record,
                    })),
            ),
        )
      }),
    get: (scope, key) =>
      Effect.flatMap(
        store.get(scope, key),
        Option.match({
          onNone: () => Effect.succeedNone,
          onSome: (record) => Effect.asSome(openIn(encryption, "get")(record)),
        }),
      ),
    update: (record, options) =>
      Effect.flatMap(seal(encryption, record), (sealed) =>
        Effect.map(store.update(sealed, options), (stored) => overlay(stored, record)),
      ),
    claimDue: (options) =>
      Effect.flatMap(store.claimDue(options), (records) =>
        Effect.forEach(records, openIn(encryption, "claimDue")),
      ),
    list: (filter) =>
      Effect.flatMap(store.list(filter), (page) =>
        Effect.map(Effect.forEach(page.records, openIn(encryption, "list")), (records) => ({
          ...page,
          records,
        })),
      ),
    claimOutcomes: (options) =>
      Effect.flatMap(store.claimOutcomes(options), (deliveries) =>
        Effect.forEach(deliveries, (delivery) =>
          Effect.map(openIn(encryption, "claimOutcomes")(delivery.record), (record) => ({
            ...delivery,
            record,
          })),
        ),
      ),
  })

/**
 * Decorates the `HandleStore` of `store` with the `Encryption` of `encryption` (a key provider's
 * layer: `Encryption.layerEnv(name)`, `Encryption.layerCallback(load)`, ...).
 *
 * @since 0.5.0
 * @category layers
 */
export const layer = <E1, E2>(
  store: Layer.Layer<HandleStore.HandleStore, E1>,
  keys: Layer.Layer<Encryption.KeyProvider, E2>,
): Layer.Layer<HandleStore.HandleStore, E1 | E2 | Encryption.InvalidKeys> =>
  Layer.effect(
    HandleStore.HandleStore,
    Effect.zipWith(HandleStore.HandleStore, Encryption.Encryption, make),
  ).pipe(Layer.provide(Layer.merge(store, Encryption.layer.pipe(Layer.provide(keys)))))

/**
 * Whether `record` is not yet sealed under `currentKeyId` alone: a field sealed under another
 * key, or a secret still in clear (a row written before encryption was on).
 *
 * @since 0.5.0
 * @category predicates
 */
export const needsRekey = (record: HandleRecord, currentKeyId: string): boolean => {
  for (const id of keyIds(record)) if (id !== currentKeyId) return true
  const clearId = (id: string | null) => id !== null && !id.startsWith(Encryption.prefixes.taskId)
  // Clear, or an `mhe1.` envelope (not bound to its row): sealed again.
  const unbound = (value: unknown) =>
    typeof value !== "string" || !value.startsWith(Encryption.prefixes.boundEnvelope)
  const answers = record.answers[sealedField]
  return (
    clearId(record.taskId) ||
    unbound(record.argumentsHash) ||
    (record.arguments !== null && unbound(envelopeOf(record.arguments))) ||
    (record.result !== null && unbound(envelopeOf(record.result))) ||
    (record.inputRequests !== null && unbound(envelopeOf(record.inputRequests))) ||
    (Object.keys(record.answers).length > 0 && unbound(answers?.response)) ||
    (record.snapshot?.session !== undefined && unbound(record.snapshot.session)) ||
    record.strayTasks.some((stray) => clearId(stray.taskId))
  )
}

/**
 * How far a `rekey` got.
 *
 * @since 0.5.0
 * @category models
 */
export interface RekeyReport {
  /** Rows read. */
  readonly examined: number
  /** Rows re-sealed under the current key. */
  readonly rekeyed: number
  /** Rows that changed under every attempt (a busy call): the next run takes them. */
  readonly skipped: number
  /** Where the next batch starts; null when every row was read. Pass it as `from` to resume. */
  readonly cursor: string | null
}

/**
 * @since 0.5.0
 * @category models
 */
export interface RekeyOptions {
  /** Rows per batch (one page of `list`). Default 100. */
  readonly batchSize?: number | undefined
  /** A `RekeyReport.cursor` of an earlier run: resume there. */
  readonly from?: string | undefined
  /** Told after each batch (the CLI prints it, so an interrupted run can resume). */
  readonly onBatch?: ((report: RekeyReport) => Effect.Effect<void>) | undefined
}

/**
 * Re-seals every row of `store` (the plain store, not the decorated one) that is not sealed
 * under the current key alone, in batches across every scope, online: each row is written by
 * compare-and-set, and a row that changed meanwhile is read again (a few times, then left to the
 * next run). Running it again is harmless (rows already under the current key are only read),
 * so an interrupted run resumes from its last cursor, or from the start. Rows in clear (a store
 * that had encryption off) are sealed too.
 *
 * A row under a key this process lacks fails the run with `MissingKey` (as a `StoreError`'s
 * cause): give the process every key still in use, newest first.
 *
 * @since 0.5.0
 * @category operations
 */
export const rekey = (
  store: HandleStore.HandleStore,
  encryption: Encryption.Encryption,
  options: RekeyOptions = {},
): Effect.Effect<RekeyReport, HandleStore.StoreError> =>
  Effect.gen(function* () {
    const limit = Math.max(1, Math.min(1000, Math.floor(options.batchSize ?? 100) || 100))
    let report: RekeyReport = { examined: 0, rekeyed: 0, skipped: 0, cursor: options.from ?? null }
    const resealOne = (first: HandleRecord) =>
      Effect.gen(function* () {
        let record = first
        for (let attempt = 0; attempt < 5; attempt++) {
          const stale = needsRekey(record, encryption.currentKeyId)
          // A row sealed before its texts' ids were taken out is opened to be sure.
          if (!stale && !(hidesIds(record) && hasTexts(record))) return "current" as const
          const clear = yield* openIn(encryption, "rekey")(record)
          if (!stale && !quotesIds(record, clear)) return "current" as const
          const sealed = yield* seal(encryption, clear)
          const written = yield* Effect.either(store.update(sealed))
          if (written._tag === "Right") return "rekeyed" as const
          if (written.left._tag === "StoreError") return yield* written.left
          // Another row holds the same task id under the current key (written under two keys
          // during a rotation): left as it is, for an operator to look at.
          if (written.left._tag === "TaskIdTaken") return "skipped" as const
          // Changed meanwhile (its driver wrote it) or gone: read it again.
          const again = yield* store.get(record.scope, record.key)
          if (Option.isNone(again)) return "current" as const
          record = again.value
        }
        return "skipped" as const
      })
    for (;;) {
      const page = yield* store.list({ limit, ...(report.cursor === null ? {} : { cursor: report.cursor }) })
      let rekeyed = 0
      let skipped = 0
      for (const record of page.records) {
        const outcome = yield* resealOne(record)
        if (outcome === "rekeyed") rekeyed++
        if (outcome === "skipped") skipped++
      }
      report = {
        examined: report.examined + page.records.length,
        rekeyed: report.rekeyed + rekeyed,
        skipped: report.skipped + skipped,
        cursor: page.nextCursor,
      }
      if (options.onBatch !== undefined) yield* options.onBatch(report)
      if (page.nextCursor === null) return report
    }
  })
