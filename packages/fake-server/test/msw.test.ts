import { setupServer } from "msw/node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as MswHandlers from "../src/MswHandlers.js"
import { request } from "./helpers.js"

const { server: fake, handlers } = MswHandlers.unsafeMake(
  {
    tools: [{ name: "job", durationMs: 60_000 }],
    faults: [{ when: { method: "tools/call", nth: 2 }, fault: { kind: "drop" } }],
  },
  { url: "http://fake-mcp.test" },
)
const msw = setupServer(...handlers)

beforeAll(() => msw.listen({ onUnhandledRequest: "error" }))
afterAll(() => msw.close())

describe("msw handlers", () => {
  it("route fetch to the fake server", async () => {
    const created = await (await fetch(request("tools/call", { name: "job" }))).json()
    expect(created.result.resultType).toBe("task")
    const ledger = await (await fetch("http://fake-mcp.test/_ledger")).json()
    expect(ledger.launches[0].taskId).toBe(created.result.taskId)
  })

  it("turn a dropped connection into a network error, after the task was created", async () => {
    await expect(fetch(request("tools/call", { name: "job" }))).rejects.toThrow(TypeError)
    expect(fake.ledger.launches).toHaveLength(2)
    expect(fake.ledger.launches[1]?.responseDelivered).toBe(false)
  })
})
