/**
 * HTML for `mcp-handles ui`, written by the server: every value goes through `html`, which
 * redacts it (the task ids the CLI knows, `Render.known`, and legacy adopted keys by their
 * shape) and escapes it, so a key, a tool name or a server's message can never become markup nor
 * show a task id. A task id asked for is shown through `revealed` (escaped only). Links and forms
 * carry a value that would show a task id sealed (`query`, `hiddenFields`, see `Seal`).
 *
 * @since 0.5.0
 */
import * as Render from "../Render.js"
import * as Seal from "./Seal.js"

/**
 * Markup that is already safe (built by `html`, or a constant of this module).
 *
 * @since 0.5.0
 * @category models
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text
  }
}

/**
 * @since 0.5.0
 * @category rendering
 */
export const escapeText = (value: string): string => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/**
 * Text as every page shows it: its task ids shortened, then escaped. The one way a value
 * becomes HTML.
 *
 * @since 0.7.0
 * @category rendering
 */
export const text = (value: string): string => escapeText(Render.known.text(value))

/**
 * Text shown whole, escaped only: a task id someone asked to see (`reveal=taskId`).
 *
 * @since 0.7.0
 * @category rendering
 */
export const revealed = (value: string): Html => new Html(escapeText(value))

type Part = Html | string | number | boolean | null | undefined | ReadonlyArray<Part>

const render = (part: Part): string => {
  if (part === null || part === undefined || part === false || part === true) return ""
  if (part instanceof Html) return part.text
  if (Array.isArray(part)) return part.map(render).join("")
  return text(String(part))
}

/**
 * A template whose interpolations are redacted and escaped (`text`; arrays are joined; null,
 * undefined and booleans render nothing, for `cond && html\`...\``).
 *
 * @since 0.5.0
 * @category constructors
 */
export const html = (strings: TemplateStringsArray, ...parts: ReadonlyArray<Part>): Html =>
  new Html(strings.reduce((out, s, i) => out + s + (i < parts.length ? render(parts[i]) : ""), ""))

const decoded = (value: string): string => {
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}

/** Whether a page showing `value` would show less of it: it holds a task id (a cursor, encoded). */
const holdsTaskId = (value: string): boolean =>
  Render.known.text(value) !== value || Render.known.text(decoded(value)) !== decoded(value)

/**
 * A parameter as a link or a form carries it: under its name, or sealed (`Seal`) under
 * `sealed.NAME` when it holds a task id. Empty values are left out.
 *
 * @since 0.7.0
 * @category rendering
 */
export const parameters = (
  params: Readonly<Record<string, string | undefined>>,
): ReadonlyArray<readonly [string, string]> =>
  Object.entries(params).flatMap(
    ([name, value]): ReadonlyArray<readonly [string, string]> =>
      value === undefined || value === ""
        ? []
        : holdsTaskId(value)
          ? [[`${Seal.prefix}${name}`, Seal.seal(value)]]
          : [[name, value]],
  )

/**
 * A query string from these parameters (see `parameters`).
 *
 * @since 0.5.0
 * @category rendering
 */
export const query = (params: Readonly<Record<string, string | undefined>>): string => {
  const search = new URLSearchParams(parameters(params) as Array<[string, string]>)
  const text = search.toString()
  return text === "" ? "" : `?${text}`
}

/**
 * A form's hidden fields (see `parameters`).
 *
 * @since 0.7.0
 * @category rendering
 */
export const hiddenFields = (fields: Readonly<Record<string, string | undefined>>): Html =>
  new Html(
    parameters(fields)
      .map(([name, value]) => `<input type="hidden" name="${text(name)}" value="${escapeText(value)}">`)
      .join(""),
  )

/**
 * A parameter of a request: sent under its name, or sealed by this process (`parameters`); empty
 * when neither (a sealed value this process cannot open is none).
 *
 * @since 0.7.0
 * @category parsing
 */
export const param = (
  params: Readonly<Record<string, string | ReadonlyArray<string>>>,
  name: string,
): string => {
  const first = (value: string | ReadonlyArray<string> | undefined) =>
    typeof value === "string" ? value : value?.[0]
  const plain = first(params[name])
  if (plain !== undefined && plain !== "") return plain
  const sealed = first(params[`${Seal.prefix}${name}`])
  return sealed === undefined ? "" : (Seal.open(sealed) ?? "")
}

/**
 * A whole page: the stylesheet and the script are served by this server (`script-src 'self'`);
 * without JavaScript the page is complete, only not live.
 *
 * @since 0.5.0
 * @category rendering
 */
export const page = (title: string, body: Html): string =>
  `<!doctype html>${
    html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin"><title>${title} · mcp-handles</title>
<link rel="stylesheet" href="/assets/ui.css"><script src="/assets/ui.js" defer></script></head>
<body><header><a href="/calls" class="brand">mcp-handles</a><nav><a href="/calls">Calls</a><a href="/fleet">Fleet</a><a href="/servers">Servers</a></nav></header><main>${body}</main></body></html>`
      .text
  }`

/**
 * The stylesheet: readable on a laptop and a phone (the table scrolls sideways on a narrow
 * screen rather than squeezing its columns).
 *
 * @since 0.5.0
 * @category constants
 */
export const css = `
:root { color-scheme: light dark; --fg: #1d1f23; --muted: #667; --line: #d8dbe0; --bg: #fff; --soft: #f4f5f7; --accent: #2457c5; --bad: #b42318; --good: #1a7f37; --warn: #9a6700; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e6e6; --muted: #9aa; --line: #3a3d44; --bg: #16181c; --soft: #202329; --accent: #7aa2ff; --bad: #ff7b72; --good: #56d364; --warn: #e3b341; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { padding: .6rem 1rem; border-bottom: 1px solid var(--line); display: flex; flex-wrap: wrap; gap: 1rem; align-items: baseline; }
header nav { display: flex; gap: .8rem; }
.brand { font-weight: 600; color: var(--fg); text-decoration: none; }
main { padding: 1rem; max-width: 1400px; margin: 0 auto; }
a { color: var(--accent); }
h1 { font-size: 1.25rem; margin: 0 0 .75rem; word-break: break-all; }
h2 { font-size: 1rem; margin: 1.25rem 0 .5rem; }
.counts { display: flex; flex-wrap: wrap; gap: .4rem; margin-bottom: .75rem; }
.count { background: var(--soft); border: 1px solid var(--line); border-radius: 999px; padding: .1rem .6rem; color: var(--fg); text-decoration: none; }
.count b { font-variant-numeric: tabular-nums; }
form.filters { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin-bottom: .75rem; }
label { display: flex; flex-direction: column; gap: .15rem; font-size: .8rem; color: var(--muted); }
label.inline { flex-direction: row; align-items: center; gap: .3rem; }
input, select, button { font: inherit; padding: .3rem .5rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
button { cursor: pointer; background: var(--soft); }
button.danger { border-color: var(--bad); color: var(--bad); }
.scroll { overflow-x: auto; border: 1px solid var(--line); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid var(--line); white-space: nowrap; vertical-align: top; }
th { background: var(--soft); font-weight: 600; font-size: .8rem; }
td.note { white-space: normal; min-width: 16rem; color: var(--muted); }
tr:last-child td { border-bottom: 0; }
.status { font-weight: 600; }
.s-completed { color: var(--good); } .s-failed, .s-expired { color: var(--bad); } .s-in_doubt, .s-input_required { color: var(--warn); } .s-cancelled { color: var(--muted); }
.stuck { color: var(--bad); }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0; }
dt { color: var(--muted); } dd { margin: 0; word-break: break-word; }
pre { background: var(--soft); padding: .5rem; border-radius: 6px; overflow-x: auto; margin: 0; white-space: pre-wrap; }
ol.timeline { list-style: none; padding: 0; margin: 0; border-left: 2px solid var(--line); }
ol.timeline li { padding: .2rem 0 .2rem .8rem; }
.muted { color: var(--muted); }
.notice { padding: .5rem .75rem; border-radius: 6px; background: var(--soft); border: 1px solid var(--line); margin-bottom: .75rem; }
.notice.error { border-color: var(--bad); }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; }
fieldset { border: 1px solid var(--line); border-radius: 8px; margin: 0 0 .75rem; }
.pager { display: flex; gap: 1rem; margin-top: .5rem; }
`

/**
 * The script: each element with `data-live` follows an event stream of its own HTML
 * (server-sent events, the browser's `EventSource`, which reconnects by itself). That HTML is
 * the server's, built by `html` like the page itself; the script parses it into an inert
 * document and moves the nodes in, without scripts, frames or event handlers even so. A form
 * being filled in is never inside a live element, so an update cannot wipe what someone typed;
 * the actions (buttons only) are, so they follow the call.
 *
 * @since 0.5.0
 * @category constants
 */
export const js = `
const inert = ["script", "style", "link", "meta", "base", "iframe", "frame", "object", "embed", "template"]
const nodesOf = (text) => {
  const body = new DOMParser().parseFromString(text, "text/html").body
  for (const el of body.querySelectorAll(inert.join(","))) el.remove()
  for (const el of body.querySelectorAll("*")) {
    for (const attribute of [...el.attributes]) if (attribute.name.startsWith("on")) el.removeAttribute(attribute.name)
  }
  return [...body.childNodes]
}
for (const el of document.querySelectorAll("[data-live]")) {
  const source = new EventSource(el.dataset.live)
  source.addEventListener("update", (event) => {
    el.replaceChildren(...nodesOf(event.data))
    el.dataset.updates = String(Number(el.dataset.updates || 0) + 1)
  })
}
`
