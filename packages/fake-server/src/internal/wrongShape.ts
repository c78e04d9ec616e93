import type { WrongShape } from "../Config.js"
import type { Json } from "../Json.js"
import { isObject } from "./json.js"

/** Distort a JSON-RPC response message the way a buggy or hostile server would. */
export const distort = (message: Record<string, Json>, shape: WrongShape): Record<string, Json> => {
  if (typeof shape !== "string") return { ...message, result: shape.replaceResult }
  const result = isObject(message.result) ? { ...(message.result as Record<string, Json>) } : undefined
  switch (shape) {
    case "missing-jsonrpc": {
      const { jsonrpc: _ignored, ...rest } = message
      return rest
    }
    case "wrong-id":
      return {
        ...message,
        id: typeof message.id === "number" ? message.id + 1_000_000 : `${String(message.id)}-x`,
      }
    case "result-not-object":
      return { ...message, result: "not an object" }
  }
  if (result === undefined) return message
  switch (shape) {
    case "missing-result-type":
      delete result.resultType
      break
    case "unknown-result-type":
      result.resultType = "mystery"
      break
    case "missing-task-id":
      delete result.taskId
      break
    case "unknown-status":
      result.status = "exploded"
      break
    case "string-poll-interval":
      result.pollIntervalMs = "soon"
      break
  }
  return { ...message, result }
}
