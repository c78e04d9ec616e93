/**
 * Which driver failures are worth retrying. A fleet shares one server that can restart, fail
 * over, or have a backend terminated by an operator; those are conditions that pass, whereas a
 * constraint violation or a syntax error will fail the same way every time.
 *
 * @internal
 */

/** SQLSTATEs of conditions that a retry on a fresh connection can outlive. */
const transientSqlStates = new Set([
  "57P01", // admin_shutdown: pg_terminate_backend, or a fast shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now: starting up or shutting down
  "53300", // too_many_connections
  "40001", // serialization_failure
  "40P01", // deadlock_detected
])

/** Node socket errors seen when the server goes away or is not there yet. */
const transientErrnos = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
])

/** Messages node-postgres uses for a connection that died under it (it sets no code). */
const transientMessages = [
  "Connection terminated",
  "connection error and is not queryable",
  "timeout exceeded when trying to connect",
  "terminating connection",
  "server closed the connection unexpectedly",
  "the database system is",
]

const isTransientOne = (error: unknown): boolean => {
  if (typeof error !== "object" || error === null) return false
  const code = (error as { readonly code?: unknown }).code
  if (typeof code === "string") {
    // Class 08: connection exception.
    if (code.startsWith("08") || transientSqlStates.has(code) || transientErrnos.has(code)) return true
  }
  const message = (error as { readonly message?: unknown }).message
  return typeof message === "string" && transientMessages.some((m) => message.includes(m))
}

/**
 * Walks the cause chain (SqlError -> pg error -> socket error) looking for a transient
 * condition. The SqlError wrapper's own message is generic, so it is not trusted on its own,
 * except for the one @effect/sql-pg raises when the socket errors mid-query.
 */
export const isTransient = (error: unknown): boolean => {
  let current: unknown = error
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    if (depth > 0 && isTransientOne(current)) return true
    if (depth === 0 && (current as { readonly message?: unknown }).message === "Connection error") return true
    current = (current as { readonly cause?: unknown }).cause
  }
  return false
}
