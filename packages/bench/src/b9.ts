/**
 * B9: the promise side by side. The same calls, the same SIGKILL schedule and the same server
 * faults against three applications, each on a fake server of its own with the same
 * configuration: ext-tasks with its documented persistence (`handoff` saves the reference,
 * `resumeTask` drives it), a naive client (the SDK's plain `callTool`, nothing saved) and
 * mcp-handles (SQLite). What users lost, per application: orphaned server work, calls launched
 * twice, questions answered twice, calls never finished (`b9-count.ts`; the processes are
 * `b9-harness.ts` and `b9-app.ts`). Goal: 0 in every column for mcp-handles.
 *
 * Run: `node dist/b9.js [--smoke] [--json] [--kills 24] [--seed 29] [--finish-every 8]
 * [--faults off] [--dedup off]` (`--dedup off`: the server does not deduplicate on the key).
 */
import { pathToFileURL } from "node:url"
import type * as B9Count from "./b9-count.js"
import * as B9Harness from "./b9-harness.js"
import { type BenchReport, cliFlags, emit, fail, loadAverage, table } from "./common.js"

const NAMES: Record<B9Count.Kind, string> = {
  "ext-tasks": "ext-tasks 0.2.2, reference saved at `handoff`, `resumeTask`",
  naive: "naive: SDK `Client.callTool`, nothing saved",
  "mcp-handles": "mcp-handles (SQLite)",
}

const COLUMNS: ReadonlyArray<readonly [keyof B9Count.Losses, string]> = [
  ["orphaned", "orphaned server work"],
  ["launchedTwice", "calls launched twice"],
  ["answeredTwice", "questions answered twice"],
  ["neverFinished", "calls never finished"],
]

/** What each column counts: the paragraph under the table. */
const MEANING = [
  "What the columns count, over the whole run, from the server's ledger and the app's journals (every call carries its key in its arguments, so the ledger names the call of every launch):",
  "",
  "- **orphaned server work**: server tasks whose outcome no process delivered and that nobody cancelled, plus held answers (the naive client's) whose connection was gone when the work ended. Nobody will ever read or cancel them: work done for nothing, or still running for nobody.",
  "- **calls launched twice**: calls the server launched more than once (the user's work done twice: two orders, two emails).",
  "- **questions answered twice**: questions the user was asked again after the server had accepted their answer, and answers the server received twice. (A question asked again because a kill came while the user typed, before any answer left, is not counted: no process can help that.) The naive client is never asked: this server asks only inside tasks, and a client that does not declare them gets a held answer.",
  "- **calls never finished**: calls whose true outcome the user never got: never delivered, or delivered as a failure although the server's task did not fail (every tool of the workload completes).",
].join("\n")

export const runB9 = async (options: {
  readonly smoke: boolean
  readonly kills?: number
  readonly seed?: number
  readonly finishEvery?: number
  readonly faults?: boolean
  readonly dedup?: boolean
  readonly log?: (line: string) => void
}): Promise<BenchReport> => {
  const kills = options.kills ?? (options.smoke ? 4 : 24)
  const seed = options.seed ?? 29
  const finishEvery = options.finishEvery ?? 8
  const faults = options.faults !== false
  const dedup = options.dedup !== false
  const loadBefore = loadAverage()
  const results = await B9Harness.run({
    kills,
    seed,
    finishEvery,
    faults,
    dedup,
    ...(options.log === undefined ? {} : { log: options.log }),
  })
  const loadAfter = loadAverage()
  const mh = results.find((r) => r.kind === "mcp-handles")
  const peers = results.filter((r) => r.kind !== "mcp-handles")
  const problems = results.flatMap((r) => r.problems.map((p) => `${r.kind}: ${p}`))
  const behind = results.map((r) => {
    const c = r.count
    const relaunched = c.launches - (c.calls - c.neverLaunched)
    return `- ${r.kind}: ${c.calls} calls, ${c.launches} launches (${relaunched} more than calls launched), ${c.tasks} server tasks; ${c.wrongOutcomes} calls delivered as failed${c.failureReasons.length === 0 ? "" : ` (${c.failureReasons.join("; ")})`}, ${c.undelivered} never delivered${r.kind === "mcp-handles" ? `; ${r.reissued.calls} calls found in doubt (a kill between the intent row and the task id, or a lost \`tools/call\` answer) and reissued (${r.reissued.times} reissues): ${dedup ? "the server answered each with the task the first send created, or launched it if that send never arrived" : "the server does not deduplicate, so a reissue of a call whose first send had arrived launched it again"}` : ""}.`
  })
  const markdown = [
    `Seed ${seed}: ${kills} SIGKILLs per application, a run to the end every ${finishEvery} kills and at the end; ${results[0]?.count.calls ?? 0} calls (tools \`task\` 700 ms, \`quick\` 200 ms, \`ask\` 600 ms with one question at 200 ms, answered in 50 ms); kills 0–1.2 s after the process is ready; ${faults ? "server faults as the process chaos run's: 10% of `tools/call` answers lost, 5% of `tasks/get` answers lost, 5% refused with 503" : "no server faults"}. The three applications run at once, each on its own fake server (same configuration and seed), which ${dedup ? "deduplicates" : "does **not** deduplicate"} \`tools/call\` on mcp-handles' key. Reproduce: \`node packages/bench/dist/b9.js --kills ${kills} --seed ${seed}${faults ? "" : " --faults off"}${dedup ? "" : " --dedup off"}\`.${options.smoke ? " SMOKE SIZE: not a measurement." : ""} Load average before ${loadBefore}, after ${loadAfter}.`,
    "",
    table(
      ["application", ...COLUMNS.map(([, title]) => title), "kills", "wall (s)"],
      results.map((r) => [
        NAMES[r.kind],
        ...COLUMNS.map(([column]) => String(r.count.losses[column])),
        String(r.kills),
        r.seconds.toFixed(0),
      ]),
    ),
    "",
    ...(problems.length === 0 ? [] : [`Problems: ${problems.join("; ")}`, ""]),
    "Behind the figures:",
    "",
    ...behind,
    "",
    MEANING,
    "",
    `B9 mcp-handles: ${COLUMNS.map(([column, title]) => `${title} **${mh?.count.losses[column] ?? "—"}**`).join(", ")} (target 0 each); ${peers
      .map((p) => `${p.kind}: ${COLUMNS.map(([column]) => p.count.losses[column]).join(" / ")}`)
      .join("; ")}`,
  ].join("\n")
  return {
    id: "B9",
    title: "the promise side by side: what users lose under SIGKILL and server faults",
    smoke: options.smoke,
    results: COLUMNS.map(([column, title]) => {
      const value = mh?.count.losses[column] ?? Number.NaN
      return {
        what: `${title}, mcp-handles`,
        value,
        unit: "calls",
        target: "0",
        met: value === 0 && problems.length === 0,
        spread: peers.map((p) => `${p.kind} ${p.count.losses[column]}`).join(", "),
      }
    }),
    markdown,
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const flags = cliFlags()
  const number = flags.number
  const kills = number("--kills")
  const seed = number("--seed")
  const finishEvery = number("--finish-every")
  const off = (name: string) => flags.option(name) === "off"
  runB9({
    smoke: flags.smoke,
    ...(kills === undefined ? {} : { kills }),
    ...(seed === undefined ? {} : { seed }),
    ...(finishEvery === undefined ? {} : { finishEvery }),
    faults: !off("--faults"),
    dedup: !off("--dedup"),
    ...(flags.json ? {} : { log: (line: string) => process.stderr.write(`${line}\n`) }),
  })
    .then((report) => emit(report, flags.json))
    .catch(fail)
}
