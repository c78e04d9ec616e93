/**
 * Durations as people write them: `"7d"`, `"30s"`, `"500ms"`, or milliseconds as a number.
 *
 * @since 0.1.0
 */

/**
 * Milliseconds, seconds, minutes, hours, days, weeks.
 *
 * @since 0.1.0
 * @category models
 */
export type ShortUnit = "ms" | "s" | "m" | "h" | "d" | "w"

/**
 * Milliseconds as a number, or a number and a short unit without a space (`"7d"`, `"1.5h"`). A
 * negative or unreadable one is refused with an `InvalidDuration` error.
 *
 * @since 0.1.0
 * @category models
 */
export type DurationInput = number | `${number}${ShortUnit}`
