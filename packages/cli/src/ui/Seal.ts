/**
 * Values a link or a form of `mcp-handles ui` must carry but must not show: a key adopted under
 * its task id (`adopted:{taskId}`), a pager's cursor past such a key, a search for one. Such a
 * parameter travels sealed, as `sealed.NAME`: encrypted and authenticated with keys this
 * process draws at start (AES-256-CTR under an IV that is the value's HMAC, so the same value
 * always seals the same way and a live view's address stays one). A URL, the browser's history
 * and the page's HTML then hold no task id; only the process that sealed a value can open it.
 *
 * @since 0.7.0
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from "node:crypto"

const macKey = randomBytes(32)
const cipherKey = randomBytes(32)
const ivBytes = 16

/**
 * The prefix of a sealed parameter's name.
 *
 * @since 0.7.0
 * @category constants
 */
export const prefix = "sealed."

const ivOf = (text: string): Buffer =>
  createHmac("sha256", macKey).update(text, "utf8").digest().subarray(0, ivBytes)

/**
 * `text`, sealed (base64url).
 *
 * @since 0.7.0
 * @category sealing
 */
export const seal = (text: string): string => {
  const iv = ivOf(text)
  const cipher = createCipheriv("aes-256-ctr", cipherKey, iv)
  return Buffer.concat([iv, cipher.update(text, "utf8"), cipher.final()]).toString("base64url")
}

/**
 * The value `sealed` holds; undefined when this process did not seal it (another process's
 * link, an earlier run's, a value tampered with).
 *
 * @since 0.7.0
 * @category sealing
 */
export const open = (sealed: string): string | undefined => {
  const raw = Buffer.from(sealed, "base64url")
  if (raw.length < ivBytes) return undefined
  const iv = raw.subarray(0, ivBytes)
  const decipher = createDecipheriv("aes-256-ctr", cipherKey, iv)
  const text = Buffer.concat([decipher.update(raw.subarray(ivBytes)), decipher.final()]).toString("utf8")
  // The IV is the value's MAC: the value is this process's only if they agree.
  return timingSafeEqual(ivOf(text), iv) ? text : undefined
}
