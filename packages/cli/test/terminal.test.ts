/**
 * The CLI on a real terminal (tmux): "sending…" at once, the live status line, an input prompt
 * built from the elicitation's form that pauses the status line, `list --watch`, and zsh's
 * completion. Skipped, saying so, where tmux (or zsh) is not installed.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type * as Config from "@mcp-handles/fake-server/Config"
import { afterEach, describe, expect, it, vi } from "vitest"
import { bin, fixture, processTestTimeout } from "./support.js"
import * as Terminal from "./terminal.js"

vi.setConfig({ testTimeout: processTestTimeout })

const config: Config.Config = {
  tools: [
    {
      name: "deploy",
      shape: "task",
      durationMs: 3_000,
      pollIntervalMs: 200,
      workingMessage: "deploying",
      inputSteps: [
        {
          atMs: 1_500,
          requests: {
            confirm: {
              method: "elicitation/create",
              params: {
                mode: "form",
                message: "Deploy to production?",
                requestedSchema: {
                  type: "object",
                  properties: {
                    who: { type: "string", title: "Your name" },
                    go: { type: "boolean", title: "Go ahead" },
                  },
                  required: ["who", "go"],
                },
              },
            },
          },
        },
      ],
      outcome: { kind: "result", text: "deployed by {{inputs.confirm.content.who}}" },
    },
    { name: "long", shape: "task", durationMs: 600_000, pollIntervalMs: 200 },
    {
      name: "render",
      shape: "direct",
      durationMs: 6_000,
      progress: { steps: [0, 25, 50, 75, 100], total: 100, message: "rendering" },
      outcome: { kind: "result", text: "rendered" },
    },
  ],
  // The server takes its time to accept the call: "sending…" must be on screen meanwhile.
  faults: [{ when: { method: "tools/call", tool: "deploy" }, fault: { kind: "latency", ms: 2_500 } }],
}

const cli = `"${process.execPath}" "${bin}"`

const fx = fixture(config)

let terminal: Terminal.Terminal | undefined

afterEach(() => {
  terminal?.close()
  terminal = undefined
})

describe.skipIf(!Terminal.tmuxInstalled)("on a terminal (tmux)", () => {
  it("shows sending…, then the status line; the prompt pauses it and asks each form field", async () => {
    terminal = await Terminal.open(fx.ws.dir, fx.ws.env, `${cli} call ${fx.server.url} deploy --key t1`)
    await terminal.waitFor(/t1: sending…/)
    // The live status line: status, the server's message, polls, time.
    await terminal.waitFor(/t1: working · "deploying" · polls \d+ · \d+\.\ds/)
    const asked = await terminal.waitFor(/Your name \(string, required\): $/m)
    expect(asked).toContain("? t1: the server asks (elicitation/create, confirm): Deploy to production?")
    // Paused: the status line does not overwrite the question.
    const promptLine = asked.trimEnd().split("\n").at(-1) ?? ""
    expect(promptLine).toBe("  Your name (string, required):")
    await terminal.type("Ada", "Enter")
    await terminal.waitFor(/Go ahead \(yes\/no, required\): $/m)
    await terminal.type("maybe", "Enter")
    await terminal.waitFor(/yes or no\n {2}Go ahead \(yes\/no, required\): $/m)
    await terminal.type("y", "Enter")
    const done = await terminal.waitFor(/\[exit \d+\]/)
    expect(done).toContain("t1: completed: deployed by Ada")
    expect(done).toContain("[exit 0]")
    expect((await fx.server.ledger()).tasks.find((t) => t.idempotencyKey === "t1")?.updates).toHaveLength(1)
  })

  it("shows a progress bar while a direct call's answer is on the way", async () => {
    terminal = await Terminal.open(fx.ws.dir, fx.ws.env, `${cli} call ${fx.server.url} render --key p1`)
    await terminal.waitFor(/p1: sending… · \[#{5}-{15}\] 25% rendering/)
    const done = await terminal.waitFor(/\[exit \d+\]/)
    expect(done).toContain("p1: completed: rendered")
  })

  it("list --watch redraws as calls come and goes on Ctrl-C", async () => {
    expect((await fx.ws.run("call", fx.server.url, "long", "--key", "w1", "--detach")).code).toBe(0)
    terminal = await Terminal.open(fx.ws.dir, fx.ws.env, `${cli} list --watch --interval 1`)
    await terminal.waitFor(/every 1s · sqlite:.*tasks\.db · scope default/)
    await terminal.waitFor(/^w1\s+working\s+long\s/m)
    expect((await fx.ws.run("call", fx.server.url, "long", "--key", "w2", "--detach")).code).toBe(0)
    await terminal.waitFor(/^w2\s+working\s+long\s/m)
    await terminal.type("C-c")
    await terminal.waitFor(/\[exit 130\]/)
  })
})

describe.skipIf(!Terminal.tmuxInstalled)("colour on a terminal (tmux)", () => {
  it("help is bold on a terminal, and plain with NO_COLOR", async () => {
    const { NO_COLOR: _, ...coloured } = fx.ws.env
    terminal = await Terminal.open(fx.ws.dir, coloured, `${cli} list --help`)
    await terminal.waitFor(/\[exit 0\]/)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for the bold escape
    expect(await terminal.styled()).toMatch(/\x1b\[1m--status/)
    terminal.close()
    terminal = await Terminal.open(fx.ws.dir, { ...fx.ws.env, NO_COLOR: "1" }, `${cli} list --help`)
    await terminal.waitFor(/\[exit 0\]/)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for any escape sequence
    expect(await terminal.styled()).not.toMatch(/\x1b\[[0-9;]*m/)
  })
})

describe.skipIf(!Terminal.tmuxInstalled || !Terminal.zshInstalled)("zsh completion (tmux, zsh)", () => {
  it("completes commands, a command's own options, and choice values", async () => {
    const binDir = join(fx.ws.dir, "bin")
    mkdirSync(binDir, { recursive: true })
    writeFileSync(join(binDir, "mcp-handles"), `#!/bin/sh\nexec ${cli} "$@"\n`, { mode: 0o755 })
    const env = { ...fx.ws.env, PATH: `${binDir}:${fx.ws.env.PATH ?? ""}` }
    terminal = await Terminal.open(fx.ws.dir, env, "zsh -f")
    await terminal.type(
      "PS1='zsh> '; autoload -Uz compinit && compinit -u && source <(mcp-handles completion zsh)",
      "Enter",
    )
    await terminal.type("echo ready", "Enter")
    await terminal.waitFor(/^ready$/m)
    await terminal.type("mcp-handles li", "Tab")
    await terminal.waitFor(/zsh> mcp-handles list $/m)
    await terminal.type("--st", "Tab")
    const options = await terminal.waitFor(/--stuck/)
    expect(options).toMatch(/--status/)
    expect(options).toMatch(/--store/)
    await terminal.type("a", "Tab")
    await terminal.waitFor(/zsh> mcp-handles list --status[= ]$/m)
    await terminal.type("Tab")
    const values = await terminal.waitFor(/in-doubt/)
    expect(values).toMatch(/terminal/)
    await terminal.type("C-c")
  })
})

// `.ci/run` installs tmux, zsh and fish and sets this: in CI none of the tests above may go
// unrun. Elsewhere a machine without them runs the rest of the suite.
if (process.env.MCP_HANDLES_REQUIRE_TERMINAL === "1") {
  it("tmux, zsh and fish are installed, so the terminal and completion tests ran", () => {
    expect({
      tmux: Terminal.tmuxInstalled,
      zsh: Terminal.zshInstalled,
      fish: Terminal.fishInstalled,
    }).toEqual({ tmux: true, zsh: true, fish: true })
  })
}
