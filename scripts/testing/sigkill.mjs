/**
 * The machinery of the adapters' SIGKILL runs (`examples/*-sigkill`, the LangChain Sigkill test):
 * an agent process started in a group of its own, its stdout read as JSON lines, killed with
 * SIGKILL once its tool call has launched, and started again on the same directory; the table of
 * what each client came to. What a run proves (the client, the server's ledger, the answer the
 * model read) stays with the run.
 *
 * Plain Node, no vitest import, as process-groups.mjs.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { readJsonLines } from "./json-lines.mjs"
import { killAll, killGroup, spawnGroup } from "./process-groups.mjs"

/** What an agent process says: one JSON line per fact, for its driver. */
export const say = (fact) => process.stdout.write(`${JSON.stringify(fact)}\n`)

/**
 * In an agent: says `{ recorded: key }` once a call is working, which is once its task id is in
 * the store (the driver kills the agent from then on).
 */
export const sayRecorded = (client) => {
  const events = client.events()
  void (async () => {
    for await (const event of events)
      if (event._tag === "StatusChanged" && event.to === "working") say({ recorded: event.key })
  })().catch(() => undefined)
}

/** Starts `node script ...args` in a group of its own; `exited` once its output is all read. */
export const startAgent = (script, args, { name = "agent", env } = {}) => {
  const child = spawnGroup(process.execPath, [script, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    ...(env === undefined ? {} : { env }),
  })
  let stderr = ""
  child.stderr?.on("data", (chunk) => {
    stderr += chunk.toString("utf8")
  })
  const closed = new Promise((resolve) => child.once("close", (code) => resolve(code)))
  const read = readJsonLines(child, name)
  return { child, lines: read.lines, next: read.next, exited: closed, stderr: () => stderr }
}

const ended = (child) => child.exitCode !== null || child.signalCode !== null

/**
 * Starts the agent, waits for the lines `waitFor` picks (in order) and for `launched()`, kills
 * it with SIGKILL, then starts it again and waits for its end, which must be a clean exit.
 */
export const killMidCallAndRestart = async ({ start, launched, waitFor = [] }) => {
  const first = start()
  const seen = []
  for (const pick of waitFor) seen.push(await first.next(pick))
  while (!launched()) {
    if (ended(first.child)) throw new Error(`the agent ended before its call launched: ${first.stderr()}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  killGroup(first.child)
  await first.exited
  const restartedAt = Date.now()
  const second = start()
  const code = await second.exited
  if (code !== 0) throw new Error(`the restarted agent exited ${code}: ${second.stderr()}`)
  return { seen, lines: second.lines, afterRestartMs: Date.now() - restartedAt }
}

/**
 * One client's run of an example's agent, which says `{ toolCall }` when its model calls the
 * tool, `{ recorded }` (the durable client) once the call's task id is on disk, and `{ answer }`
 * at its end: in a scratch directory, killed once `launches()` has one, restarted. `start` gets
 * the directory. The report, and what the restarted agent printed (`lines`).
 */
export const runClient = async ({ client, prefix, start, launches, print }) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-${client}-`))
  try {
    const toolCalled = (line) => "toolCall" in line
    const recorded = (line) => "recorded" in line
    const restarted = await killMidCallAndRestart({
      start: () => start(dir),
      // The durable agent says when the task id is on disk; the stock one has nothing to say.
      waitFor: client === "durable" ? [toolCalled, recorded] : [toolCalled],
      launched: () => launches().length > 0,
    })
    print(`   ${client}: tool call ${String(restarted.seen[0]?.toolCall).slice(0, 13)}… launched; SIGKILL`)
    const answer = restarted.lines.find((line) => "answer" in line)?.answer
    return {
      client,
      launches: launches().length,
      firstResultDelivered: launches()[0]?.responseDelivered === true,
      answer: typeof answer === "string" ? answer : undefined,
      afterRestartMs: restarted.afterRestartMs,
      lines: restarted.lines,
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** The table of what each client's run came to (`names`: how each client is called in it). */
export const table = (reports, names) => {
  const rows = [
    ["CLIENT", "LAUNCHES", "FIRST LAUNCH'S ANSWER", "ANSWER REACHED THE MODEL", "AFTER RESTART"],
    ...reports.map((report) => [
      names[report.client],
      String(report.launches),
      report.firstResultDelivered ? "delivered" : "lost (nobody received it)",
      report.answer === undefined ? "no" : report.launches > 1 ? "yes, from a second launch" : "yes",
      `${(report.afterRestartMs / 1000).toFixed(1)} s`,
    ]),
  ]
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)))
  return rows.map((row) => `  ${row.map((cell, column) => cell.padEnd(widths[column])).join("  ")}`.trimEnd())
}

/**
 * Prints the table and the verdict (and, with `json`, the reports as a last line, for a test).
 */
export const conclude = ({ durable, stock, ok, names, json, print }) => {
  print("")
  for (const line of table([durable, stock], names)) print(line)
  print("")
  print(
    ok
      ? `OK: the durable agent's call launched once and its answer reached the model; the stock client launched ${stock.launches} time(s).`
      : "FAILED: the durable agent launched more than once, or its answer never reached the model.",
  )
  if (json) print(JSON.stringify({ ok, reports: [durable, stock] }))
}

/** Runs a driver's `main` (true when the run proved its point) as the process's exit code. */
export const runMain = (main) => {
  process.once("SIGINT", () => {
    killAll()
    process.exit(130)
  })
  main()
    .then((ok) => {
      process.exitCode = ok ? 0 : 1
    })
    .catch((error) => {
      console.error(error)
      process.exitCode = 1
    })
    .finally(killAll)
}
