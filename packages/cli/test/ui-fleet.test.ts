/**
 * The fleet and servers pages of `mcp-handles ui` in a real browser (Debian's Chromium driven by
 * playwright-core), over a SQLite file shared with a live application: a child process holding
 * its instance id (`fixtures/live-app.mjs`, its background reconciler on) drives a call the CLI
 * detached, and the fleet page shows it live; a rebind confirmed on the servers page moves the
 * call to another server, and the same rebind without the token or from a foreign Origin is
 * refused. Every child is in a process group of its own and dies with this file.
 */
import type { ChildProcess } from "node:child_process"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { killGroup, spawnGroup } from "../../../scripts/testing/process-groups.mjs"
import { chromiumInstalled, launchChromium, raw, startUi, type Ui } from "./browser.js"
import { fixture, processTestTimeout } from "./support.js"

vi.setConfig({ testTimeout: processTestTimeout, hookTimeout: processTestTimeout })

const app = fileURLToPath(new URL("./fixtures/live-app.mjs", import.meta.url))
const outcomesApp = fileURLToPath(new URL("./fixtures/outcomes-app.mjs", import.meta.url))

const fx = fixture()

/** The live application under `instanceId`; resolves once it holds its id. */
const startApp = (filename: string, instanceId: string) =>
  new Promise<ChildProcess>((resolve, reject) => {
    const child = spawnGroup(process.execPath, [app, filename, fx.server.url, instanceId], {
      stdio: ["ignore", "pipe", "inherit"],
    })
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once("line", (line) =>
      line === "ready" ? resolve(child) : reject(new Error(`the app said ${line}`)),
    )
    child.once("exit", (code) => reject(new Error(`the app exited with ${code}`)))
  })

describe.skipIf(!chromiumInstalled)("mcp-handles ui: fleet and servers, in Chromium", () => {
  let filename: string
  let store: string
  let ui: Ui
  let browser: Browser
  let page: Page

  beforeAll(async () => {
    filename = join(fx.ws.dir, "app.db")
    store = `sqlite:${filename}`
    // A call the app will drive: detached by the CLI, so it is due and nobody holds it.
    const detached = await fx.ws.run(
      "call",
      "--store",
      store,
      `fake=${fx.server.url}`,
      "slow_compute",
      "--args",
      '{"seconds":600}',
      "--key",
      "fleet-1",
      "--detach",
    )
    expect(detached.code, detached.stderr).toBe(0)
    // A second server to rebind to (never reached: the test reads where the call points).
    const added = await fx.ws.run("servers", "--store", store, "--set", "fake-v2=http://127.0.0.1:9/mcp")
    expect(added.code, added.stderr).toBe(0)
    ui = await startUi(fx.ws, "--store", store)
    browser = await launchChromium()
    page = await browser.newPage()
    await page.goto(ui.url.href)
  })

  afterAll(async () => {
    await browser?.close()
  })

  it("the fleet page shows a running app's instance, live, with the row it holds", async () => {
    await page.goto(`${ui.origin}/fleet`)
    expect(await page.$('tr[data-instance="app-7"]')).toBeNull()
    await page.evaluate(() => {
      ;(window as unknown as { marker: number }).marker = 1
    })
    await startApp(filename, "app-7")
    // Its reconciler claims the detached call and renews the lease while it polls. Its heartbeat
    // may reach the page before its claim does (the row is live, holding nothing yet): the page
    // is read once it shows the claim.
    await page.waitForFunction(
      () =>
        document.querySelector('tr[data-instance="app-7"][data-live-instance="yes"] td:nth-child(5)')
          ?.textContent === "1",
      undefined,
      { timeout: 90_000 },
    )
    const row = await page.waitForSelector('tr[data-instance="app-7"][data-live-instance="yes"]')
    expect(await row.$$eval("td", (cells) => cells.map((c) => c.textContent))).toEqual([
      "app-7",
      "live",
      // Its hold on the instance id: host and pid, and its heartbeat.
      expect.stringMatching(/, \d+$/),
      expect.stringMatching(/ago$|^in /),
      "1",
      "0",
      expect.stringMatching(/^in /),
      expect.stringMatching(/ago$/),
    ])
    // Pushed into the same document, not reloaded.
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(1)
  })

  it("the fleet page shows an instance that holds no call: the ui's own, idle, with its heartbeat", async () => {
    await page.goto(`${ui.origin}/fleet`)
    const row = await page.waitForSelector('tr[data-instance^="ui:"]')
    const cells = await row.$$eval("td", (tds) => tds.map((c) => c.textContent))
    expect(cells.slice(1, 5)).toEqual([
      "idle",
      expect.stringMatching(/, \d+$/),
      expect.stringMatching(/ago$|^in /),
      "0",
    ])
  })

  it("a rebind without the token or from a foreign Origin is refused, and moves nothing", async () => {
    const host = ui.url.host
    const cookie = `mcp_handles_ui=${ui.token}`
    const rebind = (headers: Record<string, string>, confirm = "yes") =>
      raw(ui, {
        method: "POST",
        path: "/servers/rebind",
        headers: { host, "content-type": "application/x-www-form-urlencoded", ...headers },
        body: `action=rebind&from=fake&to=fake-v2&confirm=${confirm}`,
      })
    expect((await rebind({ origin: ui.origin })).status).toBe(401)
    expect((await rebind({ origin: "http://evil.example", cookie })).status).toBe(403)
    expect((await rebind({ cookie })).status).toBe(403)
    expect((await rebind({ origin: ui.origin, cookie, "sec-fetch-site": "cross-site" })).status).toBe(403)
    // From the page's own origin, with the cookie, the guard lets it through (unconfirmed, it only
    // asks): the refusals above were the guard's, on a route that exists.
    const asked = await rebind({ origin: ui.origin, cookie }, "")
    expect(asked.status).toBe(200)
    expect(asked.body).toContain("Move every call of fake to fake-v2?")
    const listed = await fx.ws.run("list", "--store", store, "--json")
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toContain('"server":"fake"')
    expect(listed.stdout).not.toContain("fake-v2")
  })

  it("a rebind confirmed on the servers page moves the call to the other server's URL", async () => {
    await page.goto(`${ui.origin}/servers`)
    expect(await page.textContent('tr[data-server="fake"] td.calls')).toBe("1")
    await page.selectOption("#rebind-from", "fake")
    await page.selectOption("#rebind-to", "fake-v2")
    await page.click("#rebind button")
    // Nothing moves until it is confirmed.
    expect(await page.textContent("main")).toContain("Move every call of fake to fake-v2?")
    expect((await fx.ws.run("list", "--store", store, "--json")).stdout).not.toContain("fake-v2")
    await page.click("#confirm")
    await page.waitForURL(/done=moved/)
    expect(await page.textContent("[role=status]")).toContain("moved 1 call(s) of fake to fake-v2")
    expect(await page.textContent('tr[data-server="fake-v2"] td.calls')).toBe("1")
    expect(await page.textContent('tr[data-server="fake"] td.calls')).toBe("0")
    await page.goto(`${ui.origin}/call?scope=default&key=fleet-1`)
    expect(await page.textContent("#live")).toContain("fake-v2 http://127.0.0.1:9/mcp")
    expect(await page.textContent("#history li.action")).toMatch(
      /rebound from fake to fake-v2 \(ui\) while \w+, by ui:/,
    )
  })

  it("the fleet page shows a consumer's outcome backlog growing once it stops claiming", async () => {
    // A consumer "app" of scope default's outcomes, claiming (and keeping) what rests.
    const feeder = spawnGroup(
      process.execPath,
      [outcomesApp, filename, fx.server.url, "feeder", "feed", "keep"],
      {
        stdio: ["ignore", "ignore", "inherit"],
      },
    )
    const exited = new Promise((resolve) => feeder.once("exit", resolve))
    await page.goto(`${ui.origin}/fleet`)
    await page.waitForSelector('tr[data-consumer="app"][data-scope="default"]', { timeout: 90_000 })
    expect(await page.textContent('tr[data-consumer="app"] td:nth-child(3)')).toBe("0")
    killGroup(feeder, "SIGKILL")
    await exited
    // A call rests after the consumer's last claim: it waits for it.
    const done = await fx.ws.run(
      "call",
      "--store",
      store,
      `fake=${fx.server.url}`,
      "slow_compute",
      "--args",
      '{"seconds":0}',
      "--key",
      "done-1",
    )
    expect(done.code, done.stderr).toBe(0)
    await page.waitForFunction(
      () => document.querySelector('tr[data-consumer="app"] td:nth-child(3)')?.textContent === "1",
      undefined,
      { timeout: 60_000 },
    )
  })
})
