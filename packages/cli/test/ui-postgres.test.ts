/**
 * `mcp-handles ui` over a PostgreSQL store, in Chromium (issue 33): the list with its exact
 * counts, a key search, a cancel from the page reaching the fake server with the history saying
 * who asked, and the fleet page listing an instance that holds no call. The database is
 * DATABASE_URL's server if set, else the embedded PostgreSQL the other Postgres tests use; a
 * database of its own, dropped afterwards.
 */
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { chromiumInstalled, openUi, type Ui } from "./browser.js"
import { type FreshDatabase, freshDatabase } from "./pg.js"
import { fixture, processTestTimeout } from "./support.js"

vi.setConfig({ testTimeout: processTestTimeout, hookTimeout: processTestTimeout })

const fx = fixture()

describe.skipIf(!chromiumInstalled)("mcp-handles ui on PostgreSQL, in Chromium", () => {
  let database: FreshDatabase | undefined
  let store: string
  let ui: Ui
  let browser: Browser
  let page: Page

  beforeAll(async () => {
    database = await freshDatabase("mcp_handles_ui")
    store = database.url
    const run = async (...args: ReadonlyArray<string>) => {
      const ran = await fx.ws.run(...args, "--store", store)
      expect(ran.code, ran.stderr).toBe(0)
    }
    await run("call", fx.server.url, "slow_compute", "--args", '{"seconds":0}', "--key", "pg-seed-1")
    await run("call", fx.server.url, "slow_compute", "--args", '{"seconds":0}', "--key", "pg-seed-2")
    await run(
      "call",
      fx.server.url,
      "slow_compute",
      "--args",
      '{"seconds":600}',
      "--key",
      "pg-long",
      "--detach",
    )
    ;({ ui, browser, page } = await openUi(fx.ws, "--store", store))
  })

  afterAll(async () => {
    await browser?.close()
    ui?.child.kill()
    await database?.drop()
  })

  it("lists the calls with exact counts, and searches keys in the database", async () => {
    await page.goto(`${ui.origin}/calls`)
    const keys = () => page.$$eval("tr[data-key]", (rows) => rows.map((r) => r.getAttribute("data-key")))
    expect(await keys()).toEqual(["pg-seed-1", "pg-seed-2", "pg-long"])
    expect(await page.textContent('a.count[data-status="completed"] b')).toBe("2")
    expect(await page.textContent('a.count[data-status="working"] b')).toBe("1")
    await page.fill('input[name="q"]', "SEED")
    await page.click('button[type="submit"]')
    await page.waitForURL(/q=SEED/)
    expect(await keys()).toEqual(["pg-seed-1", "pg-seed-2"])
    // The counts are of the calls the search selects.
    expect(await page.textContent('a.count[data-status="working"] b')).toBe("0")
  })

  it("a cancel confirmed on the page reaches the server, and the history says who asked", async () => {
    await page.goto(`${ui.origin}/call?scope=default&key=pg-long`)
    await page.click('form[action="/call/action"] button')
    await page.click("#confirm")
    await page.waitForURL(/done=cancel/)
    await page.waitForSelector("#live .s-cancelled", { timeout: 60_000 })
    const task = (await fx.server.ledger()).tasks.find((t) => t.idempotencyKey === "pg-long")
    expect(task?.cancels).toHaveLength(1)
    expect(await page.textContent("#history li.action")).toMatch(/cancel asked \(ui\) while working, by ui:/)
  })

  it("the fleet page shows the ui's own instance, which holds no call, from the database's locks", async () => {
    await page.goto(`${ui.origin}/fleet`)
    const row = await page.waitForSelector('tr[data-instance^="ui:"]')
    const cells = await row.$$eval("td", (tds) => tds.map((c) => c.textContent))
    expect(cells.slice(1, 3)).toEqual(["idle", expect.stringMatching(/, \d+$/)])
  })
})
