/**
 * The web view's faces on a store of more than 10,000 calls whose oldest rows carry task ids and
 * markup in their keys, status messages, last problems, errors and results: the calls page, a
 * call's page (its heading, fields, links and forms), the event streams of both, and the live
 * page in Chromium. No task id whole (in text, links, forms or the page title), no markup from a
 * row as an element, and the actions follow the call without a reload.
 */
import { request } from "node:http"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { type BigStore, expectNoIds, markupKey, seedBigStore } from "./bigStore.js"
import { chromiumInstalled, launchChromium, raw, startUi, type Ui } from "./browser.js"
import { processTestTimeout, type Workspace, workspace } from "./support.js"

vi.setConfig({ testTimeout: processTestTimeout, hookTimeout: processTestTimeout })

let ws: Workspace
let store: BigStore
let ui: Ui

beforeAll(async () => {
  ws = workspace()
  store = await seedBigStore(ws.dir)
  ui = await startUi(ws)
})

afterAll(() => {
  ws?.dispose()
})

const get = async (path: string) => {
  const response = await raw(ui, {
    path,
    headers: { host: ui.url.host, cookie: `mcp_handles_ui=${ui.token}` },
  })
  expect(response.status, `${path}: ${response.body.slice(0, 500)}`).toBe(200)
  return response.body
}

/** The first `update` event of an event stream (its data lines joined), then the stream is closed. */
const firstUpdate = (path: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const req = request(
      {
        host: ui.url.hostname,
        port: ui.url.port,
        path,
        headers: { host: ui.url.host, cookie: `mcp_handles_ui=${ui.token}` },
      },
      (res) => {
        let text = ""
        res.setEncoding("utf8").on("data", (chunk: string) => {
          text += chunk
          const end = text.indexOf("\n\n")
          if (end < 0) return
          req.destroy()
          const event = text.slice(0, end)
          expect(event).toMatch(/^event: update\n/)
          resolve(
            event
              .split("\n")
              .filter((line) => line.startsWith("data: "))
              .map((line) => line.slice("data: ".length))
              .join("\n"),
          )
        })
      },
    )
    req.once("error", reject)
    req.end()
  })

/** Markup a row carries, as an element: an attribute it set that escaping would have kept as text. */
const expectNoRowMarkup = (html: string, where: string) => {
  expect(html, where).not.toMatch(/id="evil-/)
  expect(html, where).not.toContain('<form method="post" action="/call/action" id=')
}

const links = (html: string): ReadonlyArray<string> =>
  [...html.matchAll(/href="(\/call\?[^"]*)"/g)].map((m) =>
    (m[1] ?? "").replaceAll("&amp;", "&").replaceAll("&#38;", "&"),
  )

describe("mcp-handles ui on a store of more than 10,000 calls", () => {
  it("the calls page: keys, notes, links and the pager hold no task id and no row's markup", async () => {
    const body = await get("/calls")
    // The oldest rows are on the first page: the legacy key, and the notes quoting ids.
    expect(body).toContain("adopted:")
    expect(body).toContain("no answer about task ")
    expect(body).toContain('rel="next"')
    expectNoIds(store.ids, body, "/calls")
    expectNoRowMarkup(body, "/calls")
    const events = await firstUpdate("/calls/events")
    expect(events).toContain("no answer about task ")
    expectNoIds(store.ids, events, "/calls/events")
    expectNoRowMarkup(events, "/calls/events")
  })

  it("each call's page, through the list's links: heading, fields, links, forms and title", async () => {
    const listed = links(await get("/calls"))
    const pages = listed.slice(0, 6)
    expect(pages.length).toBe(6)
    const bodies: Array<string> = []
    for (const path of pages) {
      const body = await get(path)
      expect(body, path).toMatch(/<h1>/)
      bodies.push(body)
      expectNoIds(store.ids, body, path)
      expectNoRowMarkup(body, path)
      // The page's live part, as its event stream sends it.
      const live = /data-live="([^"]*)"/.exec(body)?.[1]?.replaceAll("&amp;", "&").replaceAll("&#38;", "&")
      expect(live, path).toBeDefined()
      const event = await firstUpdate(live ?? "")
      expect(event.length).toBeGreaterThan(0)
      expectNoIds(store.ids, event, live ?? "")
      expectNoRowMarkup(event, live ?? "")
    }
    const all = bodies.join("\n")
    // The pages were the rows that quote their ids, and their texts are there, shortened.
    expect(all).toContain("no answer about task ")
    expect(all).toContain("answered late")
    expect(all).toContain("failed")
    expect(all).toContain("&#60;form")
    // With the task id revealed (on request, on the page only), it is there.
    const legacyPage = pages[0] ?? ""
    const revealed = await get(`${legacyPage}&reveal=taskId`)
    expect(revealed).toContain(store.legacy.taskId)
  })

  it("a call that is not there: the notice quotes its key as text, on the page and in its event stream", async () => {
    const path = `/call?scope=default&key=${encodeURIComponent(markupKey)}`
    const page = await raw(ui, { path, headers: { host: ui.url.host, cookie: `mcp_handles_ui=${ui.token}` } })
    expectNoRowMarkup(page.body, path)
    const event = await firstUpdate(
      `/call/events?scope=default&key=${encodeURIComponent(`${markupKey}-gone`)}`,
    )
    expect(event).toContain("&#60;form")
    expectNoRowMarkup(event, "/call/events of a missing call")
    const legacyMissing = `/call/events?scope=elsewhere&key=${encodeURIComponent(store.legacy.key)}`
    expectNoIds(store.ids, await firstUpdate(legacyMissing), legacyMissing)
    expectNoIds(store.ids, ui.output(), "the ui's own output")
  })
})

/** Another process ends the call (an operator's CLI, an app): written straight into the store. */
const endElsewhere = (key: string, status: "cancelled" | "completed") =>
  Effect.runPromise(
    Effect.gen(function* () {
      const s = yield* HandleStore.HandleStore
      const record = Option.getOrThrow(yield* s.get("default", key))
      if (record.settledAt !== null) return
      yield* s.update(
        new HandleRecord.HandleRecord({
          ...record,
          status,
          // Long enough ago for `gc --older-than 1d` to delete it.
          settledAt: Date.now() - 2 * 86_400_000,
          nextPollAt: null,
          leaseOwner: null,
          leaseExpiresAt: null,
        }),
      )
    }).pipe(Effect.provide(SqliteStore.layer({ filename: store.file }))),
  )

describe.skipIf(!chromiumInstalled)("the live call page in Chromium", () => {
  let browser: Browser
  let page: Page
  /** The call pages, in the list's order (the oldest rows first). */
  let listed: ReadonlyArray<string> = []

  beforeAll(async () => {
    browser = await launchChromium()
    page = await browser.newPage()
    await page.goto(ui.url.href)
    listed = links(await get("/calls"))
  })

  afterAll(async () => {
    await browser?.close()
  })

  const markUp = () => {
    ;(window as unknown as { marker: number }).marker = 1
  }
  const marker = () => (window as unknown as { marker?: number }).marker

  it("the Cancel… button goes when the call ends elsewhere, without a reload", async () => {
    // The row keyed with markup: the third oldest.
    await page.goto(`${ui.origin}${listed[2] ?? ""}`)
    expect(await page.textContent("h1")).toBe(markupKey)
    await page.evaluate(markUp)
    expect(await page.$$('form[action="/call/action"] button')).toHaveLength(1)
    await endElsewhere(markupKey, "cancelled")
    await page.waitForSelector("#live .s-cancelled", { timeout: 60_000 })
    await page.waitForFunction(
      () => document.querySelectorAll('form[action="/call/action"]').length === 0,
      null,
      { timeout: 30_000 },
    )
    expect(await page.evaluate(marker)).toBe(1)
  })

  it("a watched call deleted by gc: the notice quotes its key as text, and no element of it appears", async () => {
    await endElsewhere(markupKey, "cancelled")
    await page.goto(`${ui.origin}${listed[2] ?? ""}`)
    await page.evaluate(markUp)
    const gc = await ws.run("gc", "--older-than", "1d")
    expect(gc.code, gc.stderr).toBe(0)
    await page.waitForSelector("#live .notice.error", { timeout: 60_000 })
    // The key, quoted in the message, is text on the page.
    expect(await page.textContent("#live .notice.error")).toContain('<button id=\\"evil-button\\">')
    expect(await page.$$("#evil-form, #evil-button, [id^='evil-']")).toHaveLength(0)
    expect(await page.$$('form[action="/call/action"]')).toHaveLength(0)
    expect(await page.evaluate(marker)).toBe(1)
    expectNoIds(store.ids, `${await page.content()}\n${page.url()}`, "the live page")
  })

  it("a call keyed by its task id: its page, its cancel's confirmation and the way back name no id", async () => {
    await page.goto(`${ui.origin}${listed[0] ?? ""}`)
    expect(await page.textContent("h1")).toMatch(/^adopted:\S+…\S+$/)
    const seen = [page.url(), await page.content()]
    await page.click('form[action="/call/action"] button')
    await page.waitForSelector("#confirm")
    seen.push(page.url(), await page.content())
    // The confirmation's way back opens the same call: the sealed key came through the form.
    await page.click("text=No, go back")
    await page.waitForSelector("h1")
    expect(await page.textContent("h1")).toMatch(/^adopted:\S+…\S+$/)
    expect(await page.textContent("#live")).toContain("no answer about task ")
    seen.push(page.url(), await page.content())
    expectNoIds(store.ids, seen.join("\n"), "the pages and URLs of a cancel")
  })
})
