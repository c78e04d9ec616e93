/**
 * Task ids may be bearer credentials (SEP-2663 lets a server use them so): nothing this library
 * or its CLI writes out shows one whole. This module is the one place that knows where a task id
 * can hide, and every output path goes through it:
 *
 * - **Structure.** A row's own task id and its stray task ids (`idsOf`), and any
 *   `_meta["io.modelcontextprotocol/related-task"].taskId` in a result, a notification or an
 *   input request, wherever it sits (`value` finds and shortens those even when nobody told it
 *   the id).
 * - **Text.** Any string holding a known id: keys (rows adopted before keys were hashed were
 *   named `adopted:{taskId}`), error messages and causes (a store error, a server's error body
 *   quoting the id), log messages and annotations, span attributes and events.
 *
 * - **Shape.** A legacy adopted key (`adopted:` and anything but the 16 hex digits of a hashed
 *   key) names a task id whether or not any row said so (`legacyKeys`).
 *
 * Rather than a list of fields per printer, outputs are redacted by walking their structure with
 * the ids known to the context (`Known`): any occurrence of one, anywhere in any string, is
 * replaced by its short form (`taskId`). A `Known` never forgets an id (a redaction that kept
 * only the last N would show the N+1th-oldest whole once a process met more): it holds each id
 * once, about a hundred bytes apiece. The client keeps a `Known` fed by every record its store
 * hands it, and wraps the loggers and the tracer its fibers use (`logger`, `tracer`) and the
 * Promise facade's errors (`error`); the CLI and its web view add each row's ids as they show
 * the row (`addRecord`), and render every string through their `Known`.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HashMap from "effect/HashMap"
import * as Logger from "effect/Logger"
import * as Tracer from "effect/Tracer"
import type { HandleStore } from "./HandleStore.js"

/**
 * A task id shortened for display: its first four and last two characters (`13d8…c3`), or only
 * `…` when it is too short to show any of it safely.
 *
 * @since 0.1.0
 * @category formatting
 */
export const taskId = (id: string): string => (id.length <= 8 ? "…" : `${id.slice(0, 4)}…${id.slice(-2)}`)

/**
 * The `_meta` key under which results, notifications and input requests name the task they
 * belong to (`{ taskId }`).
 *
 * @since 0.4.0
 * @category constants
 */
export const relatedTaskMeta = "io.modelcontextprotocol/related-task"

/**
 * Ids shorter than this are replaced only where a whole string is the id: replacing every `42`
 * inside free text would garble it, and so short an id is no credential worth the name.
 *
 * @since 0.4.0
 * @category constants
 */
export const minTextLength = 6

/**
 * The task ids of a context (a client, a CLI run): every one it saw, for as long as it lives.
 *
 * @since 0.4.0
 * @category models
 */
export interface Known {
  readonly add: (...ids: ReadonlyArray<string | null | undefined>) => void
  /** Every id of the record (see `idsOf`). */
  readonly addRecord: (record: RecordLike) => void
  readonly has: (id: string) => boolean
  /** `text` with each known id (and any given here) shortened. */
  readonly text: (text: string) => string
  /** `value` with the known ids. */
  readonly value: <A>(input: A) => A
}

/**
 * What `idsOf` reads of a row: structurally, so that a `HandleRecord` and a CLI row both fit.
 *
 * @since 0.4.0
 * @category models
 */
export interface RecordLike {
  readonly taskId?: string | null | undefined
  readonly strayTasks?: ReadonlyArray<{ readonly taskId: string }> | undefined
  readonly result?: unknown
  readonly inputRequests?: unknown
}

/**
 * Every task id a row holds: its own, its strays', and those its result and input requests name
 * in `_meta` related-task references.
 *
 * @since 0.4.0
 * @category redacting
 */
export const idsOf = (record: RecordLike): ReadonlyArray<string> => {
  const ids: Array<string> = []
  if (typeof record.taskId === "string") ids.push(record.taskId)
  for (const stray of record.strayTasks ?? []) ids.push(stray.taskId)
  collectRelated(record.result, ids, 0)
  collectRelated(record.inputRequests, ids, 0)
  return ids
}

const maxDepth = 64

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The ids named by related-task references anywhere in `value`. */
const collectRelated = (value: unknown, into: Array<string>, depth: number): void => {
  if (depth > maxDepth || typeof value !== "object" || value === null) return
  if (Array.isArray(value)) {
    for (const item of value) collectRelated(item, into, depth + 1)
    return
  }
  for (const [k, v] of Object.entries(value)) {
    if (k === relatedTaskMeta && isPlainObject(v) && typeof v.taskId === "string") into.push(v.taskId)
    collectRelated(v, into, depth + 1)
  }
}

/**
 * `text` with every occurrence of one of `ids` (those at least `minTextLength` long; a string
 * that is exactly an id, whatever its length) replaced by its short form.
 *
 * @since 0.4.0
 * @category redacting
 */
export const text = (input: string, ids: Iterable<string>): string => make({ ids }).text(input)

/**
 * `input` with every string in it redacted as `text` does (object keys too), and every
 * related-task reference's `taskId` shortened whether or not it was known. Objects and arrays
 * are copied; class instances (errors included) are rebuilt by `error`; anything else is kept.
 *
 * @since 0.4.0
 * @category redacting
 */
export const value = <A>(input: A, ids: Iterable<string>): A => make({ ids }).value(input)

// A polynomial hash of `minTextLength` characters, modulo 2^32, that rolls by one character.
const hashBase = 31
const hashDrop = (() => {
  let power = 1
  for (let i = 1; i < minTextLength; i++) power = Math.imul(power, hashBase)
  return power >>> 0
})()

const prefixHash = (text: string, from = 0): number => {
  let hash = 0
  for (let i = from; i < from + minTextLength; i++)
    hash = (Math.imul(hash, hashBase) + text.charCodeAt(i)) >>> 0
  return hash
}

const rollHash = (hash: number, leaving: number, entering: number): number =>
  (Math.imul((hash - Math.imul(leaving, hashDrop)) >>> 0, hashBase) + entering) >>> 0

const legacyKey = /adopted:([^\s"'`<>,;()[\]{}]+)/g
const hashedKey = /^[0-9a-f]{16}$/

/**
 * `text` with the task id of every legacy adopted key in it shortened: rows adopted before keys
 * were hashed are keyed `adopted:{taskId}`, so whatever follows `adopted:` (up to a space, a
 * quote or a bracket) is a task id, unless it is a hashed key's 16 hex digits or already
 * shortened. It needs no row: a key typed by hand, or of a row deleted since, is caught too.
 *
 * @since 0.7.0
 * @category redacting
 */
export const legacyKeys = (text: string): string =>
  text.includes("adopted:")
    ? text.replace(legacyKey, (whole, id: string) =>
        hashedKey.test(id) || id.includes("…") ? whole : `adopted:${taskId(id)}`,
      )
    : text

/**
 * A new, empty `Known` (or holding `ids`).
 *
 * @since 0.4.0
 * @category constructors
 */
export const make = (options: { readonly ids?: Iterable<string> } = {}): Known => {
  // Never trimmed: which ids an output may quote does not depend on how many came since.
  const ids = new Set<string>()
  // Ids long enough to be looked for inside text, by a hash of their first `minTextLength`
  // characters, then by length, longest first. A scan of a string rolls that hash along it: one
  // Map lookup per character whatever the number of ids (an alternation regex of every id cost a
  // recompile per new id, half a second at 10,000, and grew with the ids on every string); where
  // it hits, one Set lookup per distinct length. Ids that share a prefix (`task-0…`, a server's
  // sequence) share a bucket: a list of them searched one by one would cost per id, not per length.
  const byPrefix = new Map<number, Array<{ readonly length: number; readonly ids: Set<string> }>>()
  const index = (id: string) => {
    if (id.length < minTextLength) return
    const hash = prefixHash(id)
    const groups = byPrefix.get(hash)
    if (groups === undefined) {
      byPrefix.set(hash, [{ length: id.length, ids: new Set([id]) }])
      return
    }
    const group = groups.find((g) => g.length === id.length)
    if (group !== undefined) group.ids.add(id)
    else {
      groups.push({ length: id.length, ids: new Set([id]) })
      groups.sort((a, b) => b.length - a.length)
    }
  }
  const add = (...more: ReadonlyArray<string | null | undefined>) => {
    for (const id of more) {
      // Every poll hands the store's ids again: one lookup, nothing written, for one seen before.
      if (typeof id !== "string" || id.length === 0 || ids.has(id)) continue
      ids.add(id)
      index(id)
    }
  }
  for (const id of options.ids ?? []) add(id)
  /** The longest id of `groups` that `input` holds at `at`. */
  const match = (
    groups: ReadonlyArray<{ readonly length: number; readonly ids: Set<string> }> | undefined,
    input: string,
    at: number,
  ): string | undefined => {
    if (groups === undefined) return undefined
    for (const group of groups) {
      if (at + group.length > input.length) continue
      const candidate = input.slice(at, at + group.length)
      if (group.ids.has(candidate)) return candidate
    }
    return undefined
  }
  const redactText = (input: string): string => legacyKeys(knownIn(input))
  const knownIn = (input: string): string => {
    if (ids.has(input)) return taskId(input)
    if (byPrefix.size === 0 || input.length < minTextLength) return input
    let out = ""
    let copied = 0
    let at = 0
    let hash = prefixHash(input)
    for (;;) {
      const found = match(byPrefix.get(hash), input, at)
      if (found !== undefined) {
        out += input.slice(copied, at) + taskId(found)
        at += found.length
        copied = at
        if (at + minTextLength > input.length) break
        hash = prefixHash(input, at)
        continue
      }
      if (at + minTextLength >= input.length) break
      hash = rollHash(hash, input.charCodeAt(at), input.charCodeAt(at + minTextLength))
      at++
    }
    return copied === 0 ? input : out + input.slice(copied)
  }
  const walk = (input: unknown, depth: number, seen: WeakMap<object, unknown>): unknown => {
    if (typeof input === "string") return redactText(input)
    if (typeof input !== "object" || input === null || depth > maxDepth) return input
    const done = seen.get(input)
    if (done !== undefined) return done
    if (Array.isArray(input)) {
      const out: Array<unknown> = []
      seen.set(input, out)
      for (const item of input) out.push(walk(item, depth + 1, seen))
      return out
    }
    if (input instanceof Error) return redactError(input, depth, seen)
    // A cause logged as data (`{ cause }`): its errors and defects.
    if (Cause.isCause(input)) return redactCause(input, (e) => walk(e, depth + 1, seen))
    const proto = Object.getPrototypeOf(input)
    if (proto !== Object.prototype && proto !== null) {
      // Class instances (Date, Map, a HandleRecord) keep their identity; a HandleRecord is
      // shown through a plain view (the CLI's row), which is walked instead.
      return input
    }
    const out: Record<string, unknown> = {}
    seen.set(input, out)
    for (const [k, v] of Object.entries(input)) {
      if (k === relatedTaskMeta && isPlainObject(v) && typeof v.taskId === "string") {
        add(v.taskId)
        out[redactText(k)] = { ...(walk(v, depth + 1, seen) as object), taskId: taskId(v.taskId) }
        continue
      }
      out[redactText(k)] = walk(v, depth + 1, seen)
    }
    return out
  }
  /**
   * An error with its message, stack, fields and cause redacted, of the same class (so a
   * `_tag` match still works); the original is left as it was.
   */
  const redactError = (error: object, depth: number, seen: WeakMap<object, unknown>): unknown => {
    const copy = Object.create(Object.getPrototypeOf(error)) as Record<string, unknown>
    seen.set(error, copy)
    for (const k of Object.getOwnPropertyNames(error)) {
      const descriptor = Object.getOwnPropertyDescriptor(error, k)
      if (descriptor === undefined) continue
      if ("value" in descriptor) descriptor.value = walk(descriptor.value, depth + 1, seen)
      Object.defineProperty(copy, k, descriptor)
    }
    // A message from a getter (a tagged error's `override get message()`) becomes an own value.
    const message = (error as { readonly message?: unknown }).message
    if (typeof message === "string") {
      Object.defineProperty(copy, "message", {
        value: redactText(message),
        enumerable: false,
        writable: true,
        configurable: true,
      })
    }
    const stack = (error as { readonly stack?: unknown }).stack
    if (typeof stack === "string") {
      Object.defineProperty(copy, "stack", {
        value: redactText(stack),
        enumerable: false,
        writable: true,
        configurable: true,
      })
    }
    return copy
  }
  return {
    add,
    addRecord: (record) => add(...idsOf(record)),
    has: (id) => ids.has(id),
    text: redactText,
    value: <A>(input: A): A => walk(input, 0, new WeakMap()) as A,
  }
}

/**
 * `cause` with every error and defect in it redacted (see `value`).
 *
 * @since 0.4.0
 * @category redacting
 */
export const cause = <E>(input: Cause.Cause<E>, known: Known): Cause.Cause<E> =>
  redactCause(input, (e) => known.value(e))

const redactCause = <E>(input: Cause.Cause<E>, redact: (value: unknown) => unknown): Cause.Cause<E> =>
  Cause.match(input, {
    onEmpty: Cause.empty as Cause.Cause<E>,
    onFail: (error) => Cause.fail(redact(error) as E),
    onDie: (defect) => Cause.die(redact(defect)),
    onInterrupt: (fiberId) => Cause.interrupt(fiberId),
    onSequential: (left, right) => Cause.sequential(left, right),
    onParallel: (left, right) => Cause.parallel(left, right),
  })

/**
 * An error as the Promise facade rejects with it: the same class and fields, its message,
 * stack and cause redacted.
 *
 * @since 0.4.0
 * @category redacting
 */
export const error = <A>(input: A, known: Known): A => known.value(input)

/**
 * `inner`, handed messages, annotations and causes with the known ids redacted. The client wraps
 * every logger its fibers use with it; an app's own logger needs nothing more.
 *
 * @since 0.4.0
 * @category logging
 */
export const logger = <Message, Output>(
  inner: Logger.Logger<Message, Output>,
  known: Known,
): Logger.Logger<Message, Output> =>
  Logger.mapInputOptions(inner, (options) => ({
    ...options,
    message: known.value(options.message),
    annotations: HashMap.map(options.annotations, (annotation) => known.value(annotation)),
    cause: cause(options.cause, known),
  }))

/**
 * `inner`, whose spans get attributes, events and the exit they end with redacted (an error's
 * message on a failed span, a log line's event). The client runs its fibers under it.
 *
 * @since 0.4.0
 * @category tracing
 */
export const tracer = (inner: Tracer.Tracer, known: Known): Tracer.Tracer =>
  Tracer.make({
    context: (f, fiber) => inner.context(f, fiber),
    span: (name, parent, context, links, startTime, kind, options) => {
      const span = inner.span(known.text(name), parent, context, links, startTime, kind, options)
      // The span itself is handed on (a child names it as its parent, and a tracer may check
      // its class): only the three ways data gets into it are redacted.
      const attribute = span.attribute.bind(span)
      const event = span.event.bind(span)
      const end = span.end.bind(span)
      span.attribute = (key, attributeValue) => attribute(key, known.value(attributeValue))
      span.event = (eventName, at, attributes) =>
        event(known.text(eventName), at, attributes === undefined ? undefined : known.value(attributes))
      span.end = (endTime, exit) =>
        end(endTime, Exit.isFailure(exit) ? Exit.failCause(cause(exit.cause, known)) : exit)
      return span
    },
  })

/** Reads the task ids of records (and of `{ record }`, `{ records }` pages) in a store's traffic. */
const scan = (known: Known, value: unknown, depth: number): void => {
  if (depth > 3 || typeof value !== "object" || value === null) return
  if (Array.isArray(value)) {
    for (const item of value) scan(known, item, depth + 1)
    return
  }
  const row = value as { readonly taskId?: unknown; readonly strayTasks?: unknown }
  if (typeof row.taskId === "string") known.add(row.taskId)
  if (Array.isArray(row.strayTasks)) {
    for (const stray of row.strayTasks) scan(known, stray, depth + 1)
  }
  if (Object.getPrototypeOf(value) === Object.prototype) {
    for (const field of Object.values(value)) scan(known, field, depth + 1)
  }
}

/**
 * `store`, telling `known` every task id that passes through it: in the records written (a new
 * task id reaches the store before anything shows it) and in those read. The client and the CLI
 * learn their ids this way.
 *
 * @since 0.4.0
 * @category constructors
 */
export const watchStore = (store: HandleStore, known: Known): HandleStore => {
  // One wrapper per member, made at its first use: every poll reads and writes through here.
  type Member = (...args: ReadonlyArray<unknown>) => unknown
  const wrappers = new WeakMap<Member, Member>()
  const watched = (target: HandleStore, member: Member): Member => {
    let wrapper = wrappers.get(member)
    if (wrapper === undefined) {
      wrapper = (...args) => {
        for (const arg of args) scan(known, arg, 0)
        const result: unknown = Reflect.apply(member, target, args)
        return Effect.isEffect(result)
          ? Effect.map(result, (value) => {
              scan(known, value, 0)
              return value
            })
          : result
      }
      wrappers.set(member, wrapper)
    }
    return wrapper
  }
  return new Proxy(store, {
    get: (target, property, receiver) => {
      const member: unknown = Reflect.get(target, property, receiver)
      return typeof member === "function" ? watched(target, member as Member) : member
    },
  })
}
