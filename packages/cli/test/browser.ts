/**
 * What the `mcp-handles ui` browser tests share: Debian's Chromium (playwright-core, launched
 * with the flags this machine's closed network needs), the UI started on a free port, and a raw
 * HTTP request for what a browser would not send (a foreign `Host`).
 */
import type { ChildProcess } from "node:child_process"
import { existsSync } from "node:fs"
import { request } from "node:http"
import { createInterface } from "node:readline"
import { type Browser, chromium, type Page } from "playwright-core"
import type { Workspace } from "./support.js"

export const chromiumPath = process.env.MCP_HANDLES_CHROMIUM ?? "/usr/bin/chromium"
export const chromiumInstalled = existsSync(chromiumPath)

// Skipped tests must be seen: a run without Chromium says so once per test file that needs it.
if (!chromiumInstalled)
  process.stderr.write(
    `\nSKIPPED: the mcp-handles ui browser tests (no Chromium at ${chromiumPath}): install it with \`apt-get install chromium\`, or point MCP_HANDLES_CHROMIUM at one (CI installs it and fails instead of skipping)\n\n`,
  )

/** Headless Chromium; without the background-networking flags it keeps dialling out, refused. */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  })

export interface Ui {
  readonly child: ChildProcess
  /** The printed URL, with the token. */
  readonly url: URL
  readonly origin: string
  readonly token: string
  /** What the process printed so far, stdout and stderr. */
  readonly output: () => string
}

/** Starts `mcp-handles ui --port 0 ...args` in `ws`; resolves with its printed URL. */
export const startUi = (ws: Workspace, ...args: ReadonlyArray<string>): Promise<Ui> =>
  new Promise((resolve, reject) => {
    const child = ws.start("ui", "--port", "0", ...args)
    let output = ""
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk
    })
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once("line", (line) => {
      output += `${line}\n`
      const url = new URL(line.trim())
      resolve({
        child,
        url,
        origin: url.origin,
        token: url.searchParams.get("token") ?? "",
        output: () => output,
      })
    })
    child.once("exit", (code) => reject(new Error(`mcp-handles ui exited with ${code}: ${output}`)))
  })

/** One raw HTTP request (Node's fetch would not let a test set Host). */
export const raw = (
  ui: Ui,
  options: {
    readonly method?: string
    readonly path: string
    readonly headers?: Record<string, string>
    readonly body?: string
  },
): Promise<{ readonly status: number; readonly body: string }> =>
  new Promise((resolve, reject) => {
    const req = request(
      {
        host: ui.url.hostname,
        port: ui.url.port,
        method: options.method ?? "GET",
        path: options.path,
        headers: options.headers,
      },
      (res) => {
        let body = ""
        res.setEncoding("utf8").on("data", (chunk: string) => {
          body += chunk
        })
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
      },
    )
    req.once("error", reject)
    req.end(options.body)
  })

/** The UI started with `args`, and a page of Chromium that went through its printed URL (the cookie is set). */
export const openUi = async (
  ws: Workspace,
  ...args: ReadonlyArray<string>
): Promise<{ readonly ui: Ui; readonly browser: Browser; readonly page: Page }> => {
  const ui = await startUi(ws, ...args)
  const browser = await launchChromium()
  const page = await browser.newPage()
  await page.goto(ui.url.href)
  return { ui, browser, page }
}
