/**
 * Fails when a process this CI run started is still alive: `.ci/run` exports
 * MCP_HANDLES_CI_RUN=<random> before it starts anything, every process started since inherits
 * it, and this scan reads /proc/<pid>/environ for it. Run it with the variable removed from its
 * own environment (`env -u MCP_HANDLES_CI_RUN`), so that neither it nor its ancestry (the script,
 * pnpm) counts. The machine's own PostgreSQL was started before the marker existed, and its
 * backends are forked from it, so it never carries the marker.
 *
 * A process may still be on its way out when the tests end (a reaper polls for its parent's
 * death every 0.5 s), so the scan repeats for a grace period before it calls anything a stray.
 * Strays are listed, then killed, and the exit code is 1.
 *
 * Usage: node scripts/strays.mjs MARKER [WHAT]
 */
import * as fs from "node:fs"

const [marker, what = "the tests"] = process.argv.slice(2)
if (marker === undefined || marker === "") {
  console.error("usage: node scripts/strays.mjs MARKER [WHAT]")
  process.exit(2)
}
const graceMs = Number(process.env.STRAYS_GRACE_MS ?? 15_000)
const entry = `MCP_HANDLES_CI_RUN=${marker}`

const read = (file) => {
  try {
    return fs.readFileSync(file, "utf8")
  } catch {
    return undefined // gone meanwhile, or not ours to read
  }
}

/** pid, state, ppid, pgid from /proc/<pid>/stat (the command name may hold spaces and parens). */
const stat = (pid) => {
  const text = read(`/proc/${pid}/stat`)
  if (text === undefined) return undefined
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
  return { state: fields[0], ppid: Number(fields[1]), pgid: Number(fields[2]) }
}

const ancestry = () => {
  const pids = new Set()
  for (let pid = process.pid; pid > 0 && !pids.has(pid); pid = stat(pid)?.ppid ?? 0) pids.add(pid)
  return pids
}

const scan = () => {
  const mine = ancestry()
  const found = []
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue
    const pid = Number(name)
    if (mine.has(pid)) continue
    const environ = read(`/proc/${pid}/environ`)
    if (environ === undefined || !environ.split("\0").includes(entry)) continue
    const s = stat(pid)
    // A zombie is dead already; its parent, if a stray, is listed itself.
    if (s === undefined || s.state === "Z") continue
    const command = (read(`/proc/${pid}/cmdline`) ?? "").split("\0").join(" ").trim()
    found.push({ pid, ...s, command })
  }
  return found
}

const deadline = Date.now() + graceMs
let strays = scan()
while (strays.length > 0 && Date.now() < deadline) {
  await new Promise((resolve) => setTimeout(resolve, 500))
  strays = scan()
}

if (strays.length === 0) {
  console.log(`strays: none left after ${what}`)
} else {
  console.error(`strays: ${strays.length} process(es) started by this run outlived ${what} (killed now):`)
  for (const p of strays) {
    console.error(`  pid ${p.pid} ppid ${p.ppid} pgid ${p.pgid}: ${p.command.slice(0, 300)}`)
  }
  for (const p of strays) {
    try {
      process.kill(p.pid, "SIGKILL")
    } catch {
      // gone meanwhile
    }
  }
  process.exit(1)
}
