#!/usr/bin/env node
/**
 * Regenerates the README's two screenshots of `mcp-handles ui`: the calls, and one call. Runs
 * the demo with `--keep` (its store stays behind), serves that store with `mcp-handles ui`, and
 * photographs both pages with Debian's Chromium through playwright-core.
 *
 *   pnpm build && node scripts/ui-screenshots.mjs    # writes docs/ui-calls.png, docs/ui-call.png
 *
 * Chromium: $MCP_HANDLES_CHROMIUM, else /usr/bin/chromium (`apt-get install chromium`).
 */
import { execFileSync } from "node:child_process"
import { createRequire } from "node:module"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { killGroup, spawnGroup } from "./testing/process-groups.mjs"

const root = fileURLToPath(new URL("..", import.meta.url))
const bin = `${root}packages/cli/dist/bin.js`
// playwright-core is a development dependency of the CLI package.
const { chromium } = createRequire(`${root}packages/cli/package.json`)("playwright-core")

const demo = execFileSync(process.execPath, [bin, "demo", "--keep"], { cwd: root, encoding: "utf8" })
const store = /--store (sqlite:\S+)/.exec(demo)?.[1]
if (store === undefined) throw new Error(`the demo named no kept store:\n${demo}`)

const ui = spawnGroup(process.execPath, [bin, "ui", "--store", store, "--port", "0"], {
  stdio: ["ignore", "pipe", "inherit"],
})
try {
  const url = await new Promise((resolve, reject) => {
    createInterface({ input: ui.stdout }).once("line", (line) => resolve(new URL(line.trim())))
    ui.once("exit", (code) => reject(new Error(`mcp-handles ui exited with ${code}`)))
  })
  const browser = await chromium.launch({
    executablePath: process.env.MCP_HANDLES_CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
    ],
  })
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 }, colorScheme: "light" })
    await page.goto(url.href)
    await page.screenshot({ path: `${root}docs/ui-calls.png`, fullPage: true })
    // The call that asked for input (delete-1): its page has the most to show.
    const keys = await page.$$eval("tr[data-key]", (rows) =>
      rows.map((r) => r.getAttribute("data-key") ?? ""),
    )
    const key = keys.find((k) => k.startsWith("delete")) ?? keys[0] ?? ""
    await page.goto(
      `${url.origin}/call?${new URLSearchParams({ scope: "default", key, reveal: "arguments,result" })}`,
    )
    await page.screenshot({ path: `${root}docs/ui-call.png`, fullPage: true })
  } finally {
    await browser.close()
  }
  console.log(`wrote docs/ui-calls.png and docs/ui-call.png from ${store}`)
} finally {
  killGroup(ui)
}
