/**
 * `mcp-handles ui` in a real browser: Debian's Chromium driven by playwright-core, against the
 * built binary serving the default SQLite store of a temporary directory, with the fake server
 * (its shipped profile: `slow_compute`, `confirm_delete`) as the MCP server. The UI process is
 * a child of this file's process group: it dies with the file.
 */
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { chromiumInstalled, chromiumPath, launchChromium, raw, startUi, type Ui } from "./browser.js"
import { fixture, processTestTimeout } from "./support.js"

vi.setConfig({ testTimeout: processTestTimeout, hookTimeout: processTestTimeout })

// `.ci/run` installs Chromium and sets this: in CI the browser tests may not go unrun.
if (process.env.MCP_HANDLES_REQUIRE_BROWSER === "1") {
  it("Chromium is installed, so the browser tests ran", () => {
    expect({ chromium: chromiumInstalled, path: chromiumPath }).toEqual({
      chromium: true,
      path: chromiumPath,
    })
  })
}

const fx = fixture()

const launches = async (key: string) =>
  (await fx.server.ledger()).launches.filter((l) => l.idempotencyKey === key).length

const taskOf = async (key: string) => (await fx.server.ledger()).tasks.find((t) => t.idempotencyKey === key)

/** Resolves once `check` holds, asking again every 100 ms (the test's timeout bounds it). */
const until = async (check: () => Promise<boolean>): Promise<void> => {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 100))
}

describe.skipIf(!chromiumInstalled)("mcp-handles ui in Chromium", () => {
  let ui: Ui
  let browser: Browser
  let page: Page

  beforeAll(async () => {
    // The store is made by a call (ui, like every command but call, refuses a missing one).
    const seeded = await fx.ws.run(
      "call",
      fx.server.url,
      "slow_compute",
      "--args",
      '{"seconds":0}',
      "--key",
      "seed-1",
    )
    expect(seeded.code, seeded.stderr).toBe(0)
    const long = await fx.ws.run(
      "call",
      fx.server.url,
      "slow_compute",
      "--args",
      '{"seconds":600}',
      "--key",
      "long-1",
      "--detach",
    )
    expect(long.code, long.stderr).toBe(0)
    ui = await startUi(fx.ws)
    browser = await launchChromium()
    page = await browser.newPage()
    // The printed URL: the token becomes a cookie and leaves the address bar.
    await page.goto(ui.url.href)
    expect(new URL(page.url()).searchParams.has("token")).toBe(false)
  })

  afterAll(async () => {
    await browser?.close()
  })

  it("the list updates live when a call finishes, without a reload", async () => {
    await page.goto(`${ui.origin}/calls`)
    await page.evaluate(() => {
      ;(window as unknown as { marker: number }).marker = 1
    })
    const running = fx.ws.start(
      "call",
      fx.server.url,
      "slow_compute",
      "--args",
      '{"seconds":3}',
      "--key",
      "live-1",
    )
    const exited = new Promise((resolve) => running.once("exit", resolve))
    await page.waitForSelector('tr[data-key="live-1"][data-status="completed"]', { timeout: 90_000 })
    // The same document all along: it was pushed, not reloaded.
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(1)
    expect(Number(await page.getAttribute("#live", "data-updates"))).toBeGreaterThan(0)
    await exited
  })

  it("reads without JavaScript: the list and a call's page are whole as served", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false })
    try {
      const plain = await context.newPage()
      await plain.goto(ui.url.href)
      expect(
        await plain.$$eval("tr[data-key]", (rows) => rows.map((r) => r.getAttribute("data-key"))),
      ).toContain("seed-1")
      await plain.click('a[href="/call?scope=default&key=seed-1"]')
      expect(await plain.textContent("#history")).toMatch(/→ completed/)
    } finally {
      await context.close()
    }
  })

  it("filters by status and by text in the key", async () => {
    await page.goto(`${ui.origin}/calls`)
    await page.selectOption('select[name="status"]', "working")
    await page.click('button[type="submit"]')
    await page.waitForURL(/status=working/)
    const working = await page.$$eval("tr[data-key]", (rows) => rows.map((r) => r.getAttribute("data-key")))
    expect(working).toEqual(["long-1"])
    await page.goto(`${ui.origin}/calls`)
    await page.fill('input[name="q"]', "SEED")
    await page.click('button[type="submit"]')
    await page.waitForURL(/q=SEED/)
    expect(await page.$$eval("tr[data-key]", (rows) => rows.map((r) => r.getAttribute("data-key")))).toEqual([
      "seed-1",
    ])
  })

  it("a cancel confirmed on the page reaches the server, and the history says who", async () => {
    await page.goto(`${ui.origin}/call?scope=default&key=long-1`)
    await page.click('form[action="/call/action"] button')
    // Nothing happens until it is confirmed.
    expect((await taskOf("long-1"))?.cancels).toEqual([])
    await page.click("#confirm")
    await page.waitForURL(/done=cancel/)
    await until(async () => ((await taskOf("long-1"))?.cancels.length ?? 0) > 0)
    expect((await taskOf("long-1"))?.cancels).toHaveLength(1)
    await page.waitForSelector("#live .s-cancelled", { timeout: 60_000 })
    expect(await page.textContent("#history")).toMatch(/→ cancelled.*by ui:/s)
    // The cancel itself, asked from the page, is in the history with who asked it.
    expect(await page.textContent("#history li.action")).toMatch(/cancel asked \(ui\) while working, by ui:/)
  })

  it("an input answered from the form completes the call once", async () => {
    const asked = await fx.ws.run(
      "call",
      fx.server.url,
      "confirm_delete",
      "--args",
      '{"filename":"report.txt"}',
      "--key",
      "ask-1",
    )
    expect(asked.code, asked.stderr).toBe(3)
    await page.goto(`${ui.origin}/call?scope=default&key=ask-1`)
    await page.check("#f-confirm")
    await page.click('form.answer button[value="accept"]')
    await page.click("#confirm")
    await page.waitForURL(/done=answered/)
    await page.waitForSelector("#live .s-completed", { timeout: 60_000 })
    const task = await taskOf("ask-1")
    expect(task?.updates.flatMap((u) => u.accepted)).toEqual(["confirm"])
    expect(await launches("ask-1")).toBe(1)
    await page.goto(`${ui.origin}/call?scope=default&key=ask-1&reveal=result`)
    expect(await page.textContent("#live")).toContain("Deleted report.txt")
    expect(await page.textContent("#history li.action")).toMatch(
      /answered \S+ \(ui\) while input_required, by ui:/,
    )
  })

  it("refuses a request without the token, a foreign Host, and an action from a foreign Origin", async () => {
    const cookie = `mcp_handles_ui=${ui.token}`
    const host = ui.url.host
    expect((await raw(ui, { path: "/calls", headers: { host } })).status).toBe(401)
    expect((await raw(ui, { path: "/?token=not-it", headers: { host } })).status).toBe(401)
    expect((await raw(ui, { path: "/calls", headers: { host, cookie } })).status).toBe(200)
    // DNS rebinding: another name that resolves here.
    expect(
      (await raw(ui, { path: "/calls", headers: { host: `evil.example:${ui.url.port}`, cookie } })).status,
    ).toBe(403)
    const started = await fx.ws.run(
      "call",
      fx.server.url,
      "slow_compute",
      "--args",
      '{"seconds":600}',
      "--key",
      "long-2",
      "--detach",
    )
    expect(started.code, started.stderr).toBe(0)
    const cancel = (headers: Record<string, string>) =>
      raw(ui, {
        method: "POST",
        path: "/call/action",
        headers: { host, cookie, "content-type": "application/x-www-form-urlencoded", ...headers },
        body: "scope=default&key=long-2&action=cancel&confirm=yes",
      })
    expect((await cancel({ origin: "http://evil.example" })).status).toBe(403)
    expect((await cancel({})).status).toBe(403)
    expect((await cancel({ origin: ui.origin, "sec-fetch-site": "cross-site" })).status).toBe(403)
    expect((await taskOf("long-2"))?.cancels).toEqual([])
    // The same request from the page's own origin is carried out: the refusals above were the guard.
    expect((await cancel({ origin: ui.origin })).status).toBe(303)
    await until(async () => ((await taskOf("long-2"))?.cancels.length ?? 0) > 0)
  })

  it("never puts a task id in a URL or in its output", async () => {
    const ids = (await fx.server.ledger()).tasks.map((t) => t.taskId)
    expect(ids.length).toBeGreaterThan(0)
    const links: Array<string> = []
    for (const path of [
      "/calls",
      "/call?scope=default&key=ask-1",
      "/call?scope=default&key=long-1&reveal=taskId",
    ]) {
      await page.goto(`${ui.origin}${path}`)
      links.push(
        page.url(),
        ...(await page.$$eval("[href], [src], [action], [data-live]", (els) =>
          els.map((e) =>
            ["href", "src", "action", "data-live"].map((a) => e.getAttribute(a) ?? "").join(" "),
          ),
        )),
      )
    }
    // Revealed on request, in the page's text only.
    const revealed = (await taskOf("long-1"))?.taskId ?? "missing"
    expect(await page.textContent("#live")).toContain(revealed)
    for (const id of ids) {
      expect(links.join("\n")).not.toContain(id)
      expect(ui.output()).not.toContain(id)
    }
  })
})
