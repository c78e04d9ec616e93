import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

// The core must run wherever `fetch` exists (Node, Bun, Deno, workers): no Node built-ins.
const sources = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sources(path) : path.endsWith(".ts") ? [path] : []
  })

describe("core portability", () => {
  const files = sources(join(import.meta.dirname, "..", "src"))

  it("finds the sources it checks", () => {
    expect(files.length).toBeGreaterThan(5)
  })

  it("no source imports a node: module, a Node built-in, or the SDK's stdio entry", () => {
    const builtins =
      /from\s+["'](node:[^"']+|fs|path|os|child_process|net|http|https|crypto|stream|buffer)["']/
    const offenders = files.filter((file) => {
      // Comments may show how a user wires in Node-only pieces; only code counts.
      const text = readFileSync(file, "utf8")
        .replace(/\/\*[\s\S]*?\*\//g, "")
        .replace(/^\s*\/\/.*$/gm, "")
      return (
        builtins.test(text) || text.includes("@modelcontextprotocol/client/stdio") || /\bBuffer\./.test(text)
      )
    })
    expect(offenders).toEqual([])
  })
})
