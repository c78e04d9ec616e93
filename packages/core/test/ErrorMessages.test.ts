/**
 * Every typed error's message is a sentence meant for people (docs/promise.md), never a dump of
 * its fields, and never the task id a field may hold: `String(error)` reads `Tag: sentence`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as Wire from "@mcp-handles/core/Wire"

const taskId = "task-7f3c9a1e-secret-bearer"
const rpc = (code: number, message: string) => new HandleRecord.RpcError({ code, message })

const errors = [
  new Wire.MalformedAnswer({ method: "tools/call", reason: "the result has no content", taskId }),
  new Wire.MalformedAnswer({ method: "tools/call", reason: "unknown resultType", namedTaskId: taskId }),
  new Wire.MalformedAnswer({ method: "tasks/get", reason: "the result nests too deep", completed: true }),
  new Wire.NotSent({ method: "tasks/get", reason: "connection refused" }),
  new Wire.NoAnswer({ method: "tools/call", reason: "the connection dropped" }),
  new Wire.RpcErrorAnswer({ method: "tools/call", error: rpc(-32602, "unknown tool") }),
  new Wire.ServerBusy({ method: "tasks/get", status: 429, retryAfterMs: 2_500 }),
  new Wire.Unauthorized({ method: "tasks/get", status: 401 }),
  new Wire.UnsupportedVersion({
    method: "tools/call",
    requested: "2026-07-28",
    supported: ["2025-11-25"],
    error: rpc(-32022, "unsupported protocol version"),
  }),
  new HandleStore.VersionConflict({ scope: "default", key: "report-7", expectedVersion: 3 }),
  new HandleStore.TaskIdTaken({ scope: "default", key: "report-7", serverId: "fake:0123456789abcdef" }),
]

describe("error messages", () => {
  it("MalformedAnswer says what happened in a sentence, without the task id it keeps", () => {
    const [created] = errors
    expect(created?.message).toBe(
      "the server's answer to tools/call is not a valid one: the result has no content; it named the task it created, whose id is kept",
    )
    expect(String(created)).toBe(`MalformedAnswer: ${created?.message}`)
  })

  it.each(errors.map((error) => [error._tag, error] as const))(
    "%s: a sentence, not its fields",
    (_, error) => {
      expect(error.message).not.toMatch(/^\{|"method"|: undefined|RpcError\(/)
      expect(error.message).not.toContain(taskId)
      expect(error.message.length).toBeGreaterThan(20)
      expect(String(error)).toBe(`${error._tag}: ${error.message}`)
    },
  )
})
