/**
 * The README's table of the tools the server serves as shipped, against what it lists: every
 * tool, in order, with its task support and its description as "what it does". A tool added,
 * renamed or redescribed in `Profile.conformance` fails here until the README says so too.
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import * as FakeServer from "../src/FakeServer.js"
import * as Profile from "../src/Profile.js"
import { call } from "./helpers.js"

const readme = readFileSync(fileURLToPath(new URL("../README.md", import.meta.url)), "utf8")

/** The rows of the table right below the `<!-- tools: ... -->` marker, as cells. */
const tableRows = (): ReadonlyArray<ReadonlyArray<string>> => {
  const lines = readme.split("\n")
  const marker = lines.findIndex((line) => line.startsWith("<!-- tools:"))
  expect(marker, "the README's tools marker").toBeGreaterThan(-1)
  const table: Array<string> = []
  for (const line of lines.slice(marker + 1)) {
    if (!line.startsWith("|")) break
    table.push(line)
  }
  return table.slice(2).map((line) =>
    line
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim().replaceAll("\\|", "|")),
  )
}

describe("the README's list of tools", () => {
  it("is what the server lists as shipped: each tool, its task support and what it does", async () => {
    const server = FakeServer.unsafeMake(Profile.conformance)
    const listed = (await call(server, "tools/list")).tools as ReadonlyArray<{
      name: string
      description: string
      execution?: { taskSupport?: string }
    }>
    expect(tableRows()).toEqual(
      listed.map((tool) => [
        `\`${tool.name}\``,
        tool.execution?.taskSupport ?? "forbidden",
        tool.description,
      ]),
    )
  })
})
