/**
 * Task ids may be bearer credentials: logs and displays show only enough to tell two apart.
 */
export const redact = (taskId: string): string =>
  taskId.length <= 8 ? "…" : `${taskId.slice(0, 4)}…${taskId.slice(-2)}`
