/**
 * Reads just enough of a `tasks/get` answer we refused (too large to read whole, nested too
 * deep, hostile keys) to learn whether the server says the task completed: then the task's fate
 * is decided and only its payload is unacceptable, so the call ends instead of being polled to
 * its TTL. Works on a prefix of the text: it stops at the first thing it cannot read.
 *
 * @internal
 */

/** The task id of a `completed` answer to request `id`, or undefined when the text does not show one. */
export const completedTaskOf = (id: number, text: string): string | undefined => {
  const found = scan(text)
  return found.id === id && found.status === "completed" && found.taskId !== undefined
    ? found.taskId
    : undefined
}

interface Found {
  id?: number
  status?: string
  taskId?: string
}

const whitespace = new Set([" ", "\t", "\n", "\r", ":"])

interface Open {
  readonly object: boolean
  /** The key this container is the value of, in its parent object. */
  readonly under: string | null
}

/**
 * A single pass over the text tracking the open containers. It records the top-level `id` and
 * the `status` and `taskId` strings of the top-level `result`; everything else is skipped.
 */
const scan = (text: string): Found => {
  const found: Found = {}
  const open: Array<Open> = []
  let expectingKey = false
  let key: string | null = null
  let i = 0
  const inResult = () => open.length === 2 && open[1]?.under === "result"
  while (i < text.length) {
    const c = text[i] as string
    if (whitespace.has(c)) {
      i++
    } else if (c === "{" || c === "[") {
      open.push({ object: c === "{", under: key })
      expectingKey = c === "{"
      key = null
      i++
    } else if (c === "}" || c === "]") {
      open.pop()
      key = null
      i++
    } else if (c === ",") {
      expectingKey = open[open.length - 1]?.object === true
      key = null
      i++
    } else if (c === '"') {
      let end = i + 1
      while (end < text.length && text[end] !== '"') end += text[end] === "\\" ? 2 : 1
      if (end >= text.length) return found
      let value: string
      try {
        value = JSON.parse(text.slice(i, end + 1)) as string
      } catch {
        return found
      }
      i = end + 1
      if (expectingKey) {
        key = value
        expectingKey = false
      } else if (inResult() && key === "status") found.status = value
      else if (inResult() && key === "taskId") found.taskId = value
    } else {
      // A number, true, false or null.
      let end = i
      while (end < text.length && !",}] \t\n\r".includes(text[end] as string)) end++
      if (open.length === 1 && key === "id") found.id = Number(text.slice(i, end))
      i = end
    }
  }
  return found
}
