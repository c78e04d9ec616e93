/**
 * UTF-8 sizes of strings, counted without encoding them: a size check on every answer from the
 * wire should not allocate a copy of the answer's bytes.
 */

/** The bytes `TextEncoder` would make of `text` (a lone surrogate becomes U+FFFD, 3 bytes). */
export const utf8Length = (text: string): number => {
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit < 0x80) bytes += 1
    else if (unit < 0x800) bytes += 2
    else if (unit >= 0xd800 && unit <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4
      i++
    } else bytes += 3
  }
  return bytes
}

/**
 * `text`'s UTF-8 size when it is over `maxBytes`, else undefined. A UTF-16 code unit is one to
 * three bytes, so a text short enough is under the limit without counting.
 */
export const utf8Over = (text: string, maxBytes: number): number | undefined => {
  if (text.length * 3 <= maxBytes) return undefined
  const bytes = utf8Length(text)
  return bytes > maxBytes ? bytes : undefined
}
