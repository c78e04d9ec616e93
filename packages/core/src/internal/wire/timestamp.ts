/**
 * ISO 8601 timestamps as servers send them (`createdAt`, `lastUpdatedAt`), to epoch milliseconds.
 *
 * The schema only says "an ISO 8601 timestamp", so every representation of a point in time the
 * standard has is accepted: calendar (`2026-07-28`, `20260728`), ordinal (`2026-209`, `2026209`)
 * and week dates (`2026-W31-2`, `2026W312`), each in extended or basic format, alone or with a
 * time of day of reduced precision (`T14`, `T14:30`, `T14:30:05`), a decimal fraction on its
 * last component (`.` or `,`), `24:00` for the end of a day, and a zone (`Z`, `±hh`, `±hh:mm`,
 * `±hhmm`). RFC 3339's space separator and lower-case `t`/`z` are accepted too. `Date.parse` is
 * not used: it knows only the extended calendar form and reads a zoneless time as local time,
 * which would make the same answer mean different instants on different machines; a zoneless
 * time is read as UTC here.
 *
 * @internal
 */

const dateForms: ReadonlyArray<{
  readonly pattern: RegExp
  readonly toDays: (groups: ReadonlyArray<string>) => number | undefined
}> = [
  // Calendar dates, extended then basic.
  { pattern: /^([+-]?\d{4})-(\d{2})-(\d{2})/, toDays: ([y, m, d]) => calendarDays(y, m, d) },
  { pattern: /^([+-]?\d{4})(\d{2})(\d{2})/, toDays: ([y, m, d]) => calendarDays(y, m, d) },
  // Week dates (the day defaults to Monday), extended then basic.
  { pattern: /^([+-]?\d{4})-W(\d{2})(?:-(\d))?/, toDays: ([y, w, d]) => weekDays(y, w, d) },
  { pattern: /^([+-]?\d{4})W(\d{2})(\d)?/, toDays: ([y, w, d]) => weekDays(y, w, d) },
  // Ordinal dates, extended then basic.
  { pattern: /^([+-]?\d{4})-(\d{3})/, toDays: ([y, o]) => ordinalDays(y, o) },
  { pattern: /^([+-]?\d{4})(\d{3})/, toDays: ([y, o]) => ordinalDays(y, o) },
]

const dayMs = 86_400_000

const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0

/** Days since 1970-01-01 of a proleptic Gregorian date, or undefined if it does not exist. */
const calendarDays = (y = "", m = "", d = ""): number | undefined => {
  const year = Number(y)
  const month = Number(m)
  const day = Number(d)
  if (month < 1 || month > 12 || day < 1) return undefined
  const length = [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0
  if (day > length) return undefined
  // Date.UTC maps years 0 to 99 onto 1900 to 1999; setUTCFullYear does not.
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  return date.getTime() / dayMs
}

const ordinalDays = (y = "", o = ""): number | undefined => {
  const ordinal = Number(o)
  const start = calendarDays(y, "01", "01")
  if (start === undefined || ordinal < 1 || ordinal > (isLeap(Number(y)) ? 366 : 365)) return undefined
  return start + ordinal - 1
}

/** The Monday of week 1: ISO weeks start on Monday, and week 1 holds the year's first Thursday. */
const firstMonday = (year: number): number | undefined => {
  const jan4 = calendarDays(String(year), "01", "04")
  // 1970-01-01 was a Thursday: (days + 3) mod 7 is 0 on Mondays.
  return jan4 === undefined ? undefined : jan4 - ((((jan4 + 3) % 7) + 7) % 7)
}

const weekDays = (y = "", w = "", d = ""): number | undefined => {
  const year = Number(y)
  const week = Number(w)
  const weekday = d === "" ? 1 : Number(d)
  const monday = firstMonday(year)
  const next = firstMonday(year + 1)
  if (monday === undefined || next === undefined || week < 1 || weekday < 1 || weekday > 7) return undefined
  const days = monday + (week - 1) * 7 + weekday - 1
  // Week 53 exists only in some years: the day must still belong to the same ISO year.
  return days < next ? days : undefined
}

// hh, hh:mm or hhmm, hh:mm:ss or hhmmss; a fraction on the last component; then the zone.
const timeForm = /^(\d{2})(?::?(\d{2})(?::?(\d{2}))?)?(?:[.,](\d+))?(Z|[+-]\d{2}(?::?\d{2})?)?$/i

const zoneMs = (zone: string | undefined): number | undefined => {
  if (zone === undefined || zone.toUpperCase() === "Z") return 0
  const sign = zone.startsWith("-") ? -1 : 1
  const digits = zone.slice(1).replace(":", "")
  const hours = Number(digits.slice(0, 2))
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0
  if (hours > 23 || minutes > 59) return undefined
  return sign * (hours * 60 + minutes) * 60_000
}

/** Milliseconds into the day of a time of day, minus its zone offset; undefined if invalid. */
const timeMs = (text: string): number | undefined => {
  const match = timeForm.exec(text)
  if (match === null) return undefined
  const [, hh = "", mm, ss, fraction, zone] = match
  const hours = Number(hh)
  const minutes = mm === undefined ? 0 : Number(mm)
  const seconds = ss === undefined ? 0 : Number(ss)
  // A leap second (:60) is read as the last instant before the next minute.
  if (minutes > 59 || seconds > 60) return undefined
  const unitMs = ss !== undefined ? 1_000 : mm !== undefined ? 60_000 : 3_600_000
  const fractionMs = fraction === undefined ? 0 : Number(`0.${fraction}`) * unitMs
  if (hours === 24 && (minutes !== 0 || seconds !== 0 || fractionMs !== 0)) return undefined
  if (hours > 24) return undefined
  const offset = zoneMs(zone)
  if (offset === undefined) return undefined
  const ms = ((hours * 60 + minutes) * 60 + Math.min(seconds, 59)) * 1_000 + fractionMs
  return Math.floor(ms + (seconds === 60 ? 999 : 0)) - offset
}

/** What nearly every server sends (`2026-07-28T14:30:05.123Z`, `...+02:00`). */
const rfc3339Form = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/

/**
 * The common form read in one match: every poll answer carries two timestamps, and trying each
 * ISO 8601 form in turn cost more than the rest of the answer's decoding. Anything else (a leap
 * second, `24:00`, other forms) goes the general way.
 */
const rfc3339 = (text: string): number | undefined => {
  const match = rfc3339Form.exec(text)
  if (match === null) return undefined
  const [, y, mo, d, hh = "", mm = "", ss = "", fraction, zone] = match
  const days = calendarDays(y, mo, d)
  const hours = Number(hh)
  const minutes = Number(mm)
  const seconds = Number(ss)
  const offset = zoneMs(zone)
  if (days === undefined || offset === undefined || hours > 23 || minutes > 59 || seconds > 59)
    return undefined
  const fractionMs = fraction === undefined ? 0 : Number(`0.${fraction}`) * 1_000
  return Math.floor(days * dayMs + ((hours * 60 + minutes) * 60 + seconds) * 1_000 + fractionMs) - offset
}

/**
 * Epoch milliseconds of an ISO 8601 date or date-time, or `undefined` when the text is not one.
 *
 * @internal
 */
export const parse = (text: string): number | undefined => {
  const common = rfc3339(text)
  if (common !== undefined) return common
  for (const form of dateForms) {
    const match = form.pattern.exec(text)
    if (match === null) continue
    const rest = text.slice(match[0].length)
    // A longer form matching a prefix (basic calendar vs ordinal) is tried first; a rest that is
    // neither empty nor a time means another form may fit.
    const days = form.toDays(match.slice(1).map((group) => group ?? ""))
    if (days === undefined) continue
    if (rest === "") return days * dayMs
    if (!/^[Tt ]/.test(rest)) continue
    const ms = timeMs(rest.slice(1))
    if (ms === undefined) continue
    const millis = days * dayMs + ms
    return Number.isFinite(millis) ? millis : undefined
  }
  return undefined
}
