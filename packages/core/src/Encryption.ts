/**
 * Encryption at rest (issue 32, item 2): keys from a `KeyProvider`, AES-GCM envelopes for the
 * values a row holds (arguments, results, input requests, answers) and a blind index for task
 * ids. The algorithms run on a `Cipher`: WebCrypto by default, so the core still runs wherever
 * `crypto.subtle` exists; a faster backend where the runtime has one (`NodeCipher` on Node).
 *
 * Two encodings, both text so that they fit any field of a record as it is:
 *
 * - an envelope, `mhe2.{keyId}.{iv}.{ciphertext}`: a fresh random 96-bit IV per write, and the
 *   caller's context (the store gives the row and the field) as AES-GCM additional data, so a
 *   value copied into another row or field does not open there. `mhe1.` envelopes, written
 *   before the context was bound, still open (without one); `rekey` rewrites them as `mhe2.`;
 * - a task id, `mhi1.{keyId}.{index}.{ciphertext}`: `index` is HMAC-SHA-256 of the id under a
 *   key derived for indexing, and the IV is its first 96 bits. The same id under the same key
 *   always gives the same text, so the store's unique index (one task id per server), adoption
 *   and duplicate-id detection work on the stored value without ever seeing the clear id. The
 *   IV repeats only when the id does (it is a PRF of the id), which is the one case GCM allows.
 *
 * Each key is 32 bytes (AES-256). Two keys are derived from it with HKDF-SHA-256 (one to
 * encrypt, one to index), so the key material a provider hands over is never used directly.
 *
 * @since 0.5.0
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Cipher from "./Cipher.js"
import { BoundedCache } from "./internal/boundedCache.js"
import * as Sealer from "./internal/sealer.js"

/**
 * The keys a process has: `current` encrypts new writes; every key in `keys` (the current one
 * included) decrypts what was written under it.
 *
 * @since 0.5.0
 * @category models
 */
export interface Keys {
  readonly current: string
  readonly keys: ReadonlyMap<string, Uint8Array>
}

/**
 * No key with this id: a row was written under a key this process was not given. Reported
 * instead of garbage.
 *
 * @since 0.5.0
 * @category errors
 */
export class MissingKey extends Data.TaggedError("MissingKey")<{ readonly keyId: string }> {
  override get message(): string {
    return `this value was encrypted under key ${JSON.stringify(this.keyId)}, which this process was not given`
  }
}

/**
 * The key is there but the value does not decrypt under it (tampered, truncated, or not ours).
 *
 * @since 0.5.0
 * @category errors
 */
export class DecryptFailed extends Data.TaggedError("DecryptFailed")<{
  readonly keyId: string
  readonly reason: string
}> {
  override get message(): string {
    return `a value encrypted under key ${JSON.stringify(this.keyId)} does not decrypt: ${this.reason}`
  }
}

/**
 * The keys could not be loaded or are not usable (a malformed variable, a short key, a KMS that
 * failed).
 *
 * @since 0.5.0
 * @category errors
 */
export class InvalidKeys extends Data.TaggedError("InvalidKeys")<{ readonly reason: string }> {
  override get message(): string {
    return `encryption keys: ${this.reason}`
  }
}

/**
 * Where keys come from. Asked once, when the `Encryption` service is built.
 *
 * @since 0.5.0
 * @category models
 */
export interface KeyProvider {
  readonly load: Effect.Effect<Keys, InvalidKeys>
}

/**
 * @since 0.5.0
 * @category tags
 */
export const KeyProvider: Context.Tag<KeyProvider, KeyProvider> = Context.GenericTag<KeyProvider>(
  "@mcp-handles/core/Encryption/KeyProvider",
)

const keyIdPattern = /^[A-Za-z0-9_-]{1,64}$/

/**
 * Reads keys from text: `id:base64key`, several separated by commas or newlines, the first one
 * current (newest first). Each key is 32 bytes, in base64 or base64url.
 *
 * ```
 * MCP_HANDLES_KEY="2026-12:q83vEj...,2026-06:3q2+7w..."
 * ```
 *
 * @since 0.5.0
 * @category constructors
 */
export const parseKeys = (text: string): Effect.Effect<Keys, InvalidKeys> =>
  Effect.suspend(() => {
    const entries = text
      .split(/[,\n]/)
      .map((entry) => entry.trim())
      .filter((entry) => entry.length > 0)
    if (entries.length === 0) return Effect.fail(new InvalidKeys({ reason: "no key given" }))
    const keys = new Map<string, Uint8Array>()
    for (const entry of entries) {
      const colon = entry.indexOf(":")
      const id = colon < 0 ? "" : entry.slice(0, colon)
      // Never quote the entry: it holds the key.
      if (!keyIdPattern.test(id)) {
        return Effect.fail(
          new InvalidKeys({ reason: "each key is written id:base64 (an id of letters, digits, - or _)" }),
        )
      }
      const bytes = fromBase64(entry.slice(colon + 1))
      if (bytes === undefined || bytes.length !== 32) {
        return Effect.fail(
          new InvalidKeys({ reason: `key ${JSON.stringify(id)} is not 32 bytes of base64 (AES-256)` }),
        )
      }
      if (keys.has(id))
        return Effect.fail(new InvalidKeys({ reason: `key ${JSON.stringify(id)} is given twice` }))
      keys.set(id, bytes)
    }
    return Effect.succeed({ current: entries[0]?.slice(0, entries[0].indexOf(":")) ?? "", keys })
  })

/**
 * Keys given as they are (tests, or an app that holds them already).
 *
 * @since 0.5.0
 * @category layers
 */
export const layerKeys = (keys: Keys): Layer.Layer<KeyProvider> =>
  Layer.succeed(KeyProvider, { load: Effect.succeed(keys) })

/**
 * Keys from text (`parseKeys`) read by `read` when the service is built: a file, a secret
 * manager. The Node helper that reads a file sits outside the core (`@mcp-handles/client`'s
 * `KeyFile`, the CLI's `--key-file`).
 *
 * @since 0.5.0
 * @category layers
 */
export const layerText = <E>(read: Effect.Effect<string, E>): Layer.Layer<KeyProvider> =>
  Layer.succeed(KeyProvider, {
    load: read.pipe(
      Effect.mapError((error) => new InvalidKeys({ reason: `could not read the keys: ${messageOf(error)}` })),
      Effect.flatMap(parseKeys),
    ),
  })

/**
 * Keys from an environment variable (through Effect's `ConfigProvider`, so no `process` here),
 * in `parseKeys`'s format.
 *
 * @since 0.5.0
 * @category layers
 */
export const layerEnv = (name: string): Layer.Layer<KeyProvider> =>
  Layer.succeed(KeyProvider, {
    load: Config.redacted(name).pipe(
      Effect.mapError(() => new InvalidKeys({ reason: `the environment variable ${name} is not set` })),
      Effect.flatMap((value) => parseKeys(Redacted.value(value))),
    ),
  })

/**
 * Keys from an async callback: a KMS that unwraps data keys, a vault. Called once per
 * `Encryption` service.
 *
 * @since 0.5.0
 * @category layers
 */
export const layerCallback = (load: () => Promise<Keys>): Layer.Layer<KeyProvider> =>
  Layer.succeed(KeyProvider, {
    load: Effect.tryPromise({
      try: load,
      catch: (error) => new InvalidKeys({ reason: `the key callback failed: ${messageOf(error)}` }),
    }).pipe(Effect.flatMap(checkKeys)),
  })

const checkKeys = (keys: Keys): Effect.Effect<Keys, InvalidKeys> => {
  if (!keys.keys.has(keys.current)) {
    return Effect.fail(
      new InvalidKeys({ reason: `the current key ${JSON.stringify(keys.current)} is not among the keys` }),
    )
  }
  for (const [id, bytes] of keys.keys) {
    if (!keyIdPattern.test(id))
      return Effect.fail(
        new InvalidKeys({ reason: `key id ${JSON.stringify(id)} is not letters, digits, - or _` }),
      )
    if (bytes.length !== 32)
      return Effect.fail(new InvalidKeys({ reason: `key ${JSON.stringify(id)} is not 32 bytes` }))
  }
  return Effect.succeed(keys)
}

/**
 * What the store decorator and the CLI use: encrypt and decrypt values and task ids, compute
 * blind indexes.
 *
 * @since 0.5.0
 * @category models
 */
export interface Encryption {
  /** The key new writes use. */
  readonly currentKeyId: string
  /**
   * The name of the `Cipher` that runs the keys (`"WebCrypto"`, `"node:crypto"`).
   *
   * @since 0.6.0
   */
  readonly cipher: string
  /** Whether this process has the key `keyId`. */
  readonly hasKey: (keyId: string) => boolean
  /**
   * `context` is bound to the envelope (AES-GCM additional data): decrypting needs the same
   * one. An `mhe1.` envelope (written before contexts) opens whatever the context.
   */
  readonly encryptString: (plain: string, context?: string) => Effect.Effect<string>
  readonly decryptString: (
    sealed: string,
    context?: string,
  ) => Effect.Effect<string, MissingKey | DecryptFailed>
  readonly encryptJson: (value: unknown, context?: string) => Effect.Effect<string>
  readonly decryptJson: (
    sealed: string,
    context?: string,
  ) => Effect.Effect<unknown, MissingKey | DecryptFailed>
  /** The task id as stored: deterministic per (key, id); see the module's notes. */
  readonly encryptTaskId: (taskId: string) => Effect.Effect<string>
  readonly decryptTaskId: (sealed: string) => Effect.Effect<string, MissingKey | DecryptFailed>
  /** HMAC-SHA-256 of `value` under the current key's index key, base64url. */
  readonly blindIndex: (value: string) => Effect.Effect<string>
}

/**
 * @since 0.5.0
 * @category tags
 */
export const Encryption: Context.Tag<Encryption, Encryption> = Context.GenericTag<Encryption>(
  "@mcp-handles/core/Encryption",
)

/**
 * Prefixes of the two encodings: what `isSealed` recognises.
 *
 * @since 0.5.0
 * @category constants
 */
export const prefixes = { envelope: "mhe1.", boundEnvelope: "mhe2.", taskId: "mhi1." } as const

/**
 * Whether `value` is an envelope of either version (`mhe2.`, bound to a context, or `mhe1.`).
 *
 * @since 0.5.1
 * @category predicates
 */
export const isEnvelope = (value: unknown): value is string =>
  typeof value === "string" &&
  (value.startsWith(prefixes.boundEnvelope) || value.startsWith(prefixes.envelope))

/**
 * Whether `value` is text this module wrote (an envelope or a sealed task id).
 *
 * @since 0.5.0
 * @category predicates
 */
export const isSealed = (value: unknown): value is string =>
  isEnvelope(value) || (typeof value === "string" && value.startsWith(prefixes.taskId))

/**
 * The key id a sealed value names, if it is one.
 *
 * @since 0.5.0
 * @category utils
 */
export const keyIdOf = (value: string): Option.Option<string> => {
  if (!isSealed(value)) return Option.none()
  const id = value.split(".")[1]
  return id === undefined ? Option.none() : Option.some(id)
}

const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8", { fatal: true })

/**
 * HKDF-SHA-256 of a key into its two working keys' bytes, once per key id. `deriveBits` gives
 * the same bytes `deriveKey` imported before the cipher was a port, so every stored value opens.
 */
const derive = async (bytes: Uint8Array): Promise<Cipher.KeyMaterial> => {
  const master = await crypto.subtle.importKey("raw", bytes as BufferSource, "HKDF", false, ["deriveBits"])
  const bits = async (label: string) =>
    new Uint8Array(
      await crypto.subtle.deriveBits(
        {
          name: "HKDF",
          hash: "SHA-256",
          salt: new Uint8Array(32),
          info: encoder.encode(`mcp-handles/v1 ${label}`),
        },
        master,
        256,
      ),
    )
  return { encrypt: await bits("encrypt"), index: await bits("blind index") }
}

/** `f` of a cipher's answer, synchronous or promised as the answer is. */
const then = Sealer.bytesThen

/**
 * A cipher's answer as an effect, built when the effect runs: a synchronous one is one step and
 * costs the fiber no suspension.
 */
const answer = <A>(run: () => A | Promise<A>): Effect.Effect<A> =>
  Effect.suspend(() => {
    const result = run()
    return Predicate.isPromise(result) ? Effect.promise(() => result) : Effect.succeed(result)
  })

/** As `answer`, with any failure (thrown or rejected) reported as `onError`'s. */
const attempt = <A, E>(run: () => A | Promise<A>, onError: () => E): Effect.Effect<A, E> =>
  Effect.suspend(() => {
    let result: A | Promise<A>
    try {
      result = run()
    } catch {
      return Effect.fail(onError())
    }
    return Predicate.isPromise(result)
      ? Effect.tryPromise({ try: () => result, catch: onError })
      : Effect.succeed(result)
  })

/**
 * The service for a set of keys: derives each key's working keys once, and runs them on
 * `cipher` (WebCrypto unless another is given).
 *
 * @since 0.5.0
 * @category constructors
 */
export const make = (
  keys: Keys,
  cipher: Cipher.Cipher = Cipher.webCrypto,
): Effect.Effect<Encryption, InvalidKeys> =>
  Effect.gen(function* () {
    yield* checkKeys(keys)
    const derived = new Map<string, Cipher.CipherKey>()
    for (const [id, bytes] of keys.keys) {
      derived.set(
        id,
        yield* Effect.tryPromise({
          try: () => derive(bytes).then(cipher.key),
          catch: (error) => new InvalidKeys({ reason: `key ${JSON.stringify(id)}: ${messageOf(error)}` }),
        }),
      )
    }
    const currentKeyId = keys.current
    const current = derived.get(currentKeyId) as Cipher.CipherKey
    const keyFor = (keyId: string) => {
      const key = derived.get(keyId)
      return key === undefined ? Effect.fail(new MissingKey({ keyId })) : Effect.succeed(key)
    }
    const additionalData = (context: string | undefined) =>
      context === undefined ? undefined : encoder.encode(context)
    const open = (
      keyId: string,
      key: Cipher.CipherKey,
      iv: Uint8Array,
      ciphertext: Uint8Array,
      context?: string,
    ) =>
      attempt(
        () => {
          const plain = key.open(iv, ciphertext, additionalData(context))
          // Not UTF-8 is as much a failure as a bad tag: the text is decoded inside the attempt.
          return then(plain, (bytes) => decoder.decode(bytes))
        },
        () =>
          new DecryptFailed({
            keyId,
            reason:
              context === undefined
                ? "authentication failed"
                : "authentication failed (tampered, or copied from another row or field)",
          }),
      )
    /** Splits `{prefix}{keyId}.{a}.{b}`. */
    const parts = (sealed: string, prefix: string) => {
      const fields = sealed.startsWith(prefix) ? sealed.slice(prefix.length).split(".") : []
      const [keyId, a, b] = fields
      const first = a === undefined ? undefined : fromBase64(a)
      const second = b === undefined ? undefined : fromBase64(b)
      return fields.length === 3 && keyId !== undefined && first !== undefined && second !== undefined
        ? Effect.succeed({ keyId, first, second })
        : Effect.fail(new DecryptFailed({ keyId: keyId ?? "", reason: "not a sealed value" }))
    }

    const sealString = (plain: string, context: string | undefined) => {
      const iv = nextIv()
      // An envelope without a context has no version of its own: it stays `mhe1.`.
      const prefix = context === undefined ? prefixes.envelope : prefixes.boundEnvelope
      return then(
        current.seal(iv, encoder.encode(plain), additionalData(context)),
        (ct) => `${prefix}${currentKeyId}.${toBase64Url(iv)}.${toBase64Url(ct)}`,
      )
    }
    const encryptString = (plain: string, context?: string) => answer(() => sealString(plain, context))
    const decryptString = (sealed: string, context?: string) =>
      sealed.startsWith(prefixes.boundEnvelope)
        ? Effect.flatMap(parts(sealed, prefixes.boundEnvelope), ({ keyId, first, second }) =>
            context === undefined
              ? Effect.fail(
                  new DecryptFailed({
                    keyId,
                    reason: "this value is bound to a context, and none was given",
                  }),
                )
              : Effect.flatMap(keyFor(keyId), (key) => open(keyId, key, first, second, context)),
          )
        : Effect.flatMap(parts(sealed, prefixes.envelope), ({ keyId, first, second }) =>
            Effect.flatMap(keyFor(keyId), (key) => open(keyId, key, first, second)),
          )
    // The same task id is sealed on every write of its row, and opened on every read: both
    // directions are remembered (a bounded number), which is safe because the sealed form is a
    // function of the id and the key alone.
    const sealedIds = new BoundedCache<string, string>(idCacheSize)
    const openedIds = new BoundedCache<string, string>(idCacheSize)
    const sealTaskId = (taskId: string): Sealer.Answer<string> => {
      const known = sealedIds.get(taskId)
      if (known !== undefined) return known
      const plain = encoder.encode(taskId)
      return then(current.mac(plain), (index) =>
        then(current.seal(index.slice(0, 12), plain, undefined), (ct) => {
          const sealed = `${prefixes.taskId}${currentKeyId}.${toBase64Url(index)}.${toBase64Url(ct)}`
          sealedIds.set(taskId, sealed)
          openedIds.set(sealed, taskId)
          return sealed
        }),
      )
    }
    const encryptTaskId = (taskId: string) => answer(() => sealTaskId(taskId))
    const decryptTaskId = (sealed: string) =>
      Effect.suspend(() => {
        const known = openedIds.get(sealed)
        if (known !== undefined) return Effect.succeed(known)
        return Effect.flatMap(parts(sealed, prefixes.taskId), ({ keyId, first, second }) =>
          Effect.flatMap(keyFor(keyId), (key) =>
            Effect.map(open(keyId, key, first.slice(0, 12), second), (taskId) => {
              openedIds.set(sealed, taskId)
              if (keyId === currentKeyId) sealedIds.set(taskId, sealed)
              return taskId
            }),
          ),
        )
      })
    // The same work without an effect per value, for `EncryptedStore` (see `internal/sealer`).
    return Sealer.register(
      Encryption.of({
        currentKeyId,
        cipher: cipher.name,
        hasKey: (keyId) => derived.has(keyId),
        encryptString,
        decryptString,
        encryptJson: (value, context) => encryptString(JSON.stringify(value), context),
        decryptJson: (sealed, context) =>
          Effect.flatMap(decryptString(sealed, context), (text) =>
            Effect.try({
              try: () => JSON.parse(text) as unknown,
              catch: () =>
                new DecryptFailed({
                  keyId: keyIdOf(sealed).pipe(Option.getOrElse(() => "")),
                  reason: "not JSON",
                }),
            }),
          ),
        encryptTaskId,
        decryptTaskId,
        blindIndex: (value) => answer(() => then(current.mac(encoder.encode(value)), toBase64Url)),
      }),
      { sealString, sealTaskId },
    )
  })

/**
 * The service, from whichever `KeyProvider` is given, on the `Cipher` in context if there is
 * one (`Cipher.layer`; `@mcp-handles/platform-node`'s `NodeCipher.layer` on Node), else WebCrypto.
 *
 * @since 0.5.0
 * @category layers
 */
export const layer: Layer.Layer<Encryption, InvalidKeys, KeyProvider> = Layer.effect(
  Encryption,
  Effect.gen(function* () {
    const provider = yield* KeyProvider
    const cipher = yield* Effect.serviceOption(Cipher.Cipher)
    return yield* make(yield* provider.load, Option.getOrUndefined(cipher))
  }),
)

/** Task ids remembered per direction: enough for every call a busy process holds open. */
const idCacheSize = 10_000

const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "string" ? error : String(error)

const base64Url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

/** Unpadded base64url, by table: no binary string, `btoa` or three regex passes per value. */
const toBase64Url = (bytes: Uint8Array): string => {
  let text = ""
  const codes: Array<number> = []
  const at = (i: number) => bytes[i] ?? 0
  const char = (sextet: number) => base64Url.charCodeAt(sextet & 63)
  let i = 0
  for (; i + 2 < bytes.length; i += 3) {
    const n = (at(i) << 16) | (at(i + 1) << 8) | at(i + 2)
    codes.push(char(n >>> 18), char(n >>> 12), char(n >>> 6), char(n))
    // A large result is turned into text a slice at a time: one call per value could pass more
    // arguments than the stack holds.
    if (codes.length >= 8192) {
      text += String.fromCharCode(...codes)
      codes.length = 0
    }
  }
  const left = bytes.length - i
  if (left > 0) {
    const n = (at(i) << 16) | (left === 2 ? at(i + 1) << 8 : 0)
    codes.push(char(n >>> 18), char(n >>> 12))
    if (left === 2) codes.push(char(n >>> 6))
  }
  return text + String.fromCharCode(...codes)
}

/**
 * IVs drawn from the system's random source a block at a time (one `getRandomValues` per 512
 * IVs rather than per value): an IV is public, only its uniqueness matters, and each 12 bytes of
 * the block are handed out once.
 */
const ivBlock = new Uint8Array(12 * 512)
let ivAt = ivBlock.length

const nextIv = (): Uint8Array => {
  if (ivAt + 12 > ivBlock.length) {
    crypto.getRandomValues(ivBlock)
    ivAt = 0
  }
  ivAt += 12
  return ivBlock.slice(ivAt - 12, ivAt)
}

const fromBase64 = (text: string): Uint8Array | undefined => {
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(text)) return undefined
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, ""))
    return Uint8Array.from(binary, (char) => char.charCodeAt(0))
  } catch {
    return undefined
  }
}
