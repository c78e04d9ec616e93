/**
 * Task ids may be bearer credentials (the spec allows it): logs and displays show only enough of
 * one to tell two apart.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export const taskId = (id: string): string => (id.length <= 8 ? "…" : `${id.slice(0, 4)}…${id.slice(-2)}`)
