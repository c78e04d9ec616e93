/**
 * The sealing an `Encryption` made by `Encryption.make` does, without an effect around each
 * value: answered as its cipher answers (synchronously with `NodeCipher`, promised with
 * WebCrypto). `EncryptedStore` seals all of a record's fields through it in one effect step,
 * where one effect per field cost more than a synchronous cipher's work (B1, issue 32).
 *
 * Kept beside the service rather than on its interface: an `Encryption` made another way has
 * none, and `EncryptedStore` then seals through the interface's effects, one value after another.
 */
/** A cipher's answer: synchronous, or promised. */
export type Answer<A> = A | Promise<A>

export interface Sealer {
  /** `Encryption.encryptString`'s work. */
  readonly sealString: (plain: string, context: string | undefined) => Answer<string>
  /** `Encryption.encryptTaskId`'s work. */
  readonly sealTaskId: (taskId: string) => Answer<string>
}

const sealers = new WeakMap<object, Sealer>()

/** Records `sealer` as the direct form of `encryption` (an `Encryption` service object). */
export const register = <A extends object>(encryption: A, sealer: Sealer): A => {
  sealers.set(encryption, sealer)
  return encryption
}

/** The direct form of `encryption`, when `Encryption.make` made it. */
export const sealerOf = (encryption: object): Sealer | undefined => sealers.get(encryption)

/**
 * `f` of a cipher's bytes, synchronous or promised as they are. Told apart by the synchronous
 * type rather than by looking for `then`: `"then" in bytes` walks a typed array's prototypes, a
 * slow lookup on every value (B1's callgrind profile). Anything else is taken as a promise.
 */
export const bytesThen = <B>(
  answer: Uint8Array | Promise<Uint8Array>,
  f: (bytes: Uint8Array) => Answer<B>,
): Answer<B> => (answer instanceof Uint8Array ? f(answer) : Promise.resolve(answer).then(f))

/** Whether a sealed text is here already (not promised). */
export const isText = (answer: Answer<string>): answer is string => typeof answer === "string"
