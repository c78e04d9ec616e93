#!/usr/bin/env node
/**
 * How fast `mcp-handles ui` answers on a big store (issue 33: the first page and a filter change
 * under 300 ms at 100,000 rows). A benchmark, not a test: it prints the median of several timed
 * requests per page.
 *
 *   pnpm build && node scripts/ui-bench.mjs [ROWS]      # default 100000
 *
 * The store is a real SQLite store: one call made through the CLI against the fake server, then
 * copied ROWS times in SQL (keys, scopes, statuses and times varied), since 100,000 calls
 * through a server would take the benchmark's whole time.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { request } from "node:http"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { killGroup, spawnGroup } from "./testing/process-groups.mjs"

const rows = Number(process.argv[2] ?? 100_000)
const root = fileURLToPath(new URL("..", import.meta.url))
const bin = `${root}packages/cli/dist/bin.js`
const Database = createRequire(`${root}packages/store-sqlite/package.json`)("better-sqlite3")
const fakeServerBin = (() => {
  const dir = `${root}packages/fake-server/`
  const pkg = JSON.parse(readFileSync(`${dir}package.json`, "utf8"))
  return join(dir, Object.values(pkg.bin)[0])
})()

const firstLine = (child) =>
  new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", (line) => resolve(line.trim()))
    child.once("exit", (code) => reject(new Error(`exited with ${code}`)))
  })

const dir = mkdtempSync(join(tmpdir(), "mcp-handles-ui-bench-"))
const db = join(dir, "tasks.db")
const children = []
try {
  const server = spawnGroup(process.execPath, [fakeServerBin, "--port", "0"], {
    stdio: ["ignore", "pipe", "inherit"],
  })
  children.push(server)
  const url = await firstLine(server)
  execFileSync(
    process.execPath,
    [bin, "call", url, "slow_compute", "--args", '{"seconds":0}', "--key", "seed", "--store", `sqlite:${db}`],
    {
      stdio: "ignore",
    },
  )

  const sqlite = new Database(db)
  const columns = sqlite
    .prepare("SELECT name FROM pragma_table_info('handles')")
    .all()
    .map((c) => c.name)
  // The columns a query reads, and the same fields in the JSON body the record is decoded from.
  const key = "printf('call-%06d', n)"
  const scope = "CASE n % 10 WHEN 0 THEN 'tenant-b' ELSE 'default' END"
  const status =
    "CASE WHEN n % 1000 = 0 THEN 'working' WHEN n % 997 = 0 THEN 'in_doubt' WHEN n % 50 = 0 THEN 'failed' ELSE 'completed' END"
  const createdAt = `created_at - (${rows} - n) * 1000`
  const varied = {
    key,
    scope,
    status,
    created_at: createdAt,
    // The seed's task id made unique per row, in its column (when the schema has one) and body alike.
    task_id: "task_id || '-' || n",
    body: `json_set(body, '$.key', ${key}, '$.scope', ${scope}, '$.status', ${status}, '$.createdAt', ${createdAt}, '$.taskId', json_extract(body, '$.taskId') || '-' || n)`,
  }
  const select = columns.map((c) => varied[c] ?? c).join(", ")
  const started = Date.now()
  sqlite.exec(`WITH RECURSIVE cnt(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM cnt WHERE n < ${rows})
    INSERT INTO handles (${columns.join(", ")}) SELECT ${select} FROM handles, cnt WHERE handles.key = 'seed'`)
  sqlite.close()
  console.log(`seeded ${rows} rows in ${Date.now() - started} ms`)

  const ui = spawnGroup(process.execPath, [bin, "ui", "--store", `sqlite:${db}`, "--port", "0"], {
    stdio: ["ignore", "pipe", "inherit"],
  })
  children.push(ui)
  const address = new URL(await firstLine(ui))
  const cookie = `mcp_handles_ui=${address.searchParams.get("token")}`
  const get = (path) =>
    new Promise((resolve, reject) => {
      const t0 = performance.now()
      const req = request(
        { host: address.hostname, port: address.port, path, headers: { cookie } },
        (res) => {
          res.resume()
          res.on("end", () =>
            res.statusCode === 200
              ? resolve(performance.now() - t0)
              : reject(new Error(`${path}: ${res.statusCode}`)),
          )
        },
      )
      req.once("error", reject)
      req.end()
    })
  const pages = [
    ["first page (scope default)", "/calls"],
    ["first page, every scope", "/calls?scope=*"],
    ["status filter: working", "/calls?status=working"],
    ["status filter: failed, scope default", "/calls?status=failed&scope=default"],
    ["key text: call-0999", "/calls?q=call-0999"],
    ["key text, every scope: call-09999", "/calls?q=call-09999&scope=*"],
    ["key text, no match", "/calls?q=nowhere"],
    ["stuck only", "/calls?stuck=1"],
    ["one call", "/call?scope=default&key=call-000001"],
    ["fleet", "/fleet"],
    ["servers", "/servers"],
  ]
  console.log(`\n| page (${rows} rows) | median ms | max ms |\n| --- | ---: | ---: |`)
  for (const [name, path] of pages) {
    await get(path) // warm
    const times = []
    for (let i = 0; i < 7; i++) times.push(await get(path))
    times.sort((a, b) => a - b)
    console.log(`| ${name} | ${times[3].toFixed(0)} | ${times[6].toFixed(0)} |`)
  }
} finally {
  for (const child of children) killGroup(child)
  rmSync(dir, { recursive: true, force: true })
}
