/**
 * Help that helps: every command and option described, with an example, in help rendered from
 * the same definitions the parser uses; plain text in a pipe; working completion for bash and
 * fish (zsh's is driven on a terminal, in terminal.test.ts).
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { runGroup } from "../../../scripts/testing/process-groups.mjs"
import { docs, version } from "../src/Cli.js"
import { processTestTimeout, type Workspace, workspace } from "./support.js"
import * as Terminal from "./terminal.js"

vi.setConfig({ testTimeout: processTestTimeout })

let ws: Workspace

beforeAll(() => {
  ws = workspace()
})

afterAll(() => {
  ws?.dispose()
})

// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for escape sequences
const ansi = /\x1b\[/

describe("the definitions", () => {
  it("describe every command, argument and option, each with an example", () => {
    expect(docs.map((d) => d.name)).toEqual([
      "demo",
      "call",
      "resume",
      "list",
      "show",
      "cancel",
      "reissue",
      "abandon",
      "gc",
      "rekey",
      "servers",
      "tools",
      "ui",
      "completion",
    ])
    for (const doc of docs) {
      expect(doc.summary, doc.name).not.toBe("")
      expect(doc.description.length, doc.name).toBeGreaterThan(0)
      expect(doc.examples.length, doc.name).toBeGreaterThan(0)
      for (const example of doc.examples) expect(example.command, doc.name).toMatch(/mcp-handles/)
      for (const flag of doc.flags) {
        expect(flag.description.length, `${doc.name} ${flag.name}`).toBeGreaterThan(10)
        expect(flag.example.startsWith(flag.name), `${doc.name} ${flag.name}: ${flag.example}`).toBe(true)
      }
      for (const flag of doc.flags) {
        // The help adds "repeatable" from the definition; a description that says it too doubles it.
        expect(flag.description, `${doc.name} ${flag.name}`).not.toMatch(/repeatable/)
      }
      for (const arg of doc.args) {
        expect(arg.description.length, `${doc.name} ${arg.name}`).toBeGreaterThan(5)
        expect(arg.example, `${doc.name} ${arg.name}`).not.toBe("")
      }
    }
  })
})

describe("help", () => {
  it("the program's help lists every command, in plain text when piped", async () => {
    const ran = await ws.run("--help")
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).not.toMatch(ansi)
    for (const doc of docs)
      expect(ran.stdout).toMatch(new RegExp(`^ {2}${doc.name}\\s+${literal(doc.summary)}$`, "m"))
    expect(ran.stdout).toMatch(/^Exit codes:$/m)
    expect(ran.stdout).not.toMatch(/A user-defined piece of text|This setting is optional/)
    expect((await ws.run()).stdout).toBe(ran.stdout)
    expect((await ws.run("--version")).stdout).toBe(`${version}\n`)
  })

  it.each(docs.map((doc) => [doc.name, doc] as const))(
    "%s --help shows every option with its description and example",
    async (_, doc) => {
      const ran = await ws.run(doc.name, "--help")
      expect(ran.code, ran.stderr).toBe(0)
      expect(ran.stdout).not.toMatch(ansi)
      expect(ran.stdout.startsWith(`mcp-handles ${doc.name}: ${doc.summary}`)).toBe(true)
      const flat = ran.stdout.replace(/\s+/g, " ")
      for (const flag of [
        ...doc.flags,
        { name: "--help", description: "show this help", example: "--help" },
      ]) {
        expect(ran.stdout, `${doc.name} ${flag.name}`).toContain(`  ${flag.name}`)
        expect(flat, `${doc.name} ${flag.name}`).toContain(flag.description.replace(/\s+/g, " "))
        expect(ran.stdout, `${doc.name} ${flag.name}`).toContain(`e.g. ${flag.example}`)
      }
      for (const example of doc.examples) expect(ran.stdout).toContain(`$ ${example.command}`)
    },
  )

  it("help COMMAND is COMMAND --help", async () => {
    const help = await ws.run("help", "list")
    expect(help.stdout).toBe((await ws.run("list", "--help")).stdout)
  })
})

/** A regular expression that matches `text` literally. */
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const script = async (shell: string): Promise<string> => {
  const ran = await ws.run("completion", shell)
  expect(ran.code, ran.stderr).toBe(0)
  const file = join(ws.dir, `completion.${shell}`)
  writeFileSync(file, ran.stdout)
  return file
}

describe("completion", () => {
  it("bash: commands, a command's own options, choice values", async () => {
    const file = await script("bash")
    const complete = async (...words: ReadonlyArray<string>) => {
      const array = words.map((w) => `'${w}'`).join(" ")
      const ran = await runGroup(
        "bash",
        [
          "-c",
          `source '${file}'; COMP_WORDS=(${array}); COMP_CWORD=${words.length - 1}; _mcp_handles; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        { env: ws.env },
      )
      expect(ran.code, ran.stderr).toBe(0)
      return ran.stdout.split("\n").filter((l) => l !== "")
    }
    expect(await complete("mcp-handles", "li")).toEqual(["list"])
    expect((await complete("mcp-handles", "list", "--st")).sort()).toEqual(["--status", "--store", "--stuck"])
    expect(await complete("mcp-handles", "list", "--status", "")).toEqual([
      "open",
      "terminal",
      "in-doubt",
      "all",
    ])
    expect(await complete("mcp-handles", "call", "URL", "tool", "--header-")).toEqual(["--header-env"])
    expect(await complete("mcp-handles", "completion", "")).toEqual(["bash", "zsh", "fish"])
    expect((await complete("mcp-handles", "servers", "--re")).sort()).toEqual(["--rebind", "--remove"])
    expect((await complete("mcp-handles", "list", "--all")).sort()).toEqual(["--all-scopes"])
    expect(await complete("mcp-handles", "help", "re")).toEqual(["resume", "reissue", "rekey"])
  })

  it.skipIf(!Terminal.fishInstalled)("fish: commands, a command's own options, choice values", async () => {
    const file = await script("fish")
    const complete = async (line: string) => {
      const ran = await runGroup("fish", ["--no-config", "-c", `source '${file}'; complete -C'${line}'`], {
        env: ws.env,
      })
      expect(ran.code, ran.stderr).toBe(0)
      return ran.stdout
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => l.split("\t")[0])
    }
    expect(await complete("mcp-handles li")).toEqual(["list"])
    expect((await complete("mcp-handles list --st")).sort()).toEqual(["--status", "--store", "--stuck"])
    expect(await complete("mcp-handles list --status ")).toEqual(expect.arrayContaining(["open", "in-doubt"]))
  })

  it("zsh: the script is valid zsh", async () => {
    if (!Terminal.zshInstalled) return
    const file = await script("zsh")
    const ran = await runGroup("zsh", ["-n", file], { env: ws.env })
    expect(ran.code, ran.stderr).toBe(0)
  })
})
