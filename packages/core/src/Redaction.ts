/**
 * Task ids may be bearer credentials (the spec allows it): logs and displays show only enough of
 * one to tell two apart.
 *
 * @since 0.1.0
 */

/**
 * A task id shortened for display: its first four and last two characters (`13d8…c3`), or only
 * `…` when it is too short to show any of it safely.
 *
 * @since 0.1.0
 * @category formatting
 */
export const taskId = (id: string): string => (id.length <= 8 ? "…" : `${id.slice(0, 4)}…${id.slice(-2)}`)
