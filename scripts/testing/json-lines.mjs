/**
 * A child process's stdout read as JSON lines, for tests that drive real processes: every line
 * seen so far, and a wait for the first line a test is looking for. A line that is not a JSON
 * object is kept as `{ text }`.
 *
 * Plain Node, no vitest import, as process-groups.mjs.
 */

/** Reads `child`'s stdout; `name` says which process in the error when it ends first. */
export const readJsonLines = (child, name = "child") => {
  const lines = []
  const waiting = []
  let ended = false
  let stderr = ""
  let buffer = ""
  const wakeAll = () => {
    for (const wake of waiting.splice(0)) wake()
  }
  child.stderr?.on("data", (chunk) => {
    stderr += chunk.toString("utf8")
  })
  child.stdout?.on("data", (chunk) => {
    buffer += chunk.toString("utf8")
    for (let at = buffer.indexOf("\n"); at >= 0; at = buffer.indexOf("\n")) {
      const line = buffer.slice(0, at)
      buffer = buffer.slice(at + 1)
      lines.push(line.startsWith("{") ? JSON.parse(line) : { text: line })
      wakeAll()
    }
  })
  const exited = new Promise((resolve) =>
    child.once("exit", (code) => {
      ended = true
      wakeAll()
      resolve(code)
    }),
  )
  const next = (pick) =>
    new Promise((resolve, reject) => {
      const check = () => {
        const found = lines.find(pick)
        if (found !== undefined) return resolve(found)
        if (ended) return reject(new Error(`${name} ended without the expected line; stderr: ${stderr}`))
        waiting.push(check)
      }
      check()
    })
  return { lines, next, exited }
}
