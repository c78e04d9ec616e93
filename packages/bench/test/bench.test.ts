/**
 * Every benchmark at its smoke size, so that none rots. No timing assertions: only that each
 * runs to the end and reports a value for each of its targets.
 */
import { describe, expect, it } from "vitest"
import { runB3 } from "../src/b3.js"
import { minimumPolls, runB4 } from "../src/b4.js"
import { runB5 } from "../src/b5.js"
import { runB7 } from "../src/b7.js"
import { runB8 } from "../src/b8.js"
import * as Markdown from "../src/markdown.js"
import { parseRatioLines, runAll, updateBenchmarks } from "../src/run.js"

const finite = (report: { results: ReadonlyArray<{ value: number }> }) => {
  expect(report.results.length).toBeGreaterThan(0)
  for (const r of report.results) expect(Number.isFinite(r.value)).toBe(true)
}

describe("benchmarks at smoke size", () => {
  it("B3 reconciles a seeded store and reports time and memory", async () => {
    const report = await runB3({ smoke: true, rows: 50, reps: 1 })
    finite(report)
    expect(report.markdown).toContain("| 50 ")
  }, 120_000)

  it("B4 counts polls against the minimum", async () => {
    const report = await runB4({ smoke: true })
    finite(report)
    // Poll discipline is an invariant, not a timing: the ledger saw no early poll.
    expect(report.results.find((r) => r.what === "early polls")?.value).toBe(0)
  }, 120_000)

  it("B5 runs both requesters on the same workload", async () => {
    finite(await runB5({ smoke: true, calls: 3 }))
  }, 120_000)

  it("B7 runs push and polling on one server and reports polls and latency", async () => {
    const report = await runB7({ smoke: true, tasks: 4, durationMs: 1_500 })
    finite(report)
    expect(report.markdown).toContain("| push ")
    expect(report.markdown).toContain("| polling ")
  }, 120_000)

  it("B8 holds tasks open on both sides and reports memory and CPU per poll", async () => {
    const report = await runB8({ smoke: true, sizes: [10], rate: 20 })
    finite(report)
    expect(report.results.map((r) => r.unit)).toEqual(["B", "×", "writes", "tasks"])
    expect(report.markdown).toContain("B8 CPU per poll vs ext-tasks: 10: **")
    // The push side is measured, not derived: its own row, its CPU over one safety net.
    expect(report.results.at(-1)?.what).toBe("open tasks one core follows with push (measured at 10 open)")
    expect(report.markdown.match(/^\| mcp-handles with push /gm)).toHaveLength(1)
  }, 120_000)

  it("B8 with --repeat reports each side's median run and every round's ratio", async () => {
    const report = await runB8({ smoke: true, sizes: [10], rate: 20, repeat: 2 })
    finite(report)
    const cpu = report.results.find((r) => r.unit === "×")
    expect(cpu?.spread).toMatch(/^\d+\.\d{2}–\d+\.\d{2}$/)
    expect(report.markdown).toMatch(/in each round: 10: \d+\.\d{2}×, \d+\.\d{2}×\./)
    // One row per polling side: the median run, not every round (the push side has a table of its own).
    expect(report.markdown.match(/^\| (mcp-handles \(|ext-tasks )/gm)).toHaveLength(2)
  }, 180_000)

  it("B1 and B2 (the SQLite package's script) run and their ratios parse", async () => {
    const outcomes = await runAll({ smoke: true, only: ["B1", "B2"], log: () => {} })
    expect(outcomes.map((o) => o.id)).toEqual(["B1", "B2"])
    for (const o of outcomes) {
      expect(o.problem).toBeUndefined()
      expect(o.results.length).toBeGreaterThan(0)
    }
  }, 300_000)
})

const facts = {
  command: "pnpm bench",
  loadBefore: "1",
  loadAfter: "1",
  machine: "2 CPUs",
  date: "2026-01-01",
}

describe("the runner", () => {
  it("computes DESIGN.md's minimum, also for changing intervals", () => {
    expect(minimumPolls(5_000, 1_000)).toBe(6)
    expect(minimumPolls(4_500, 1_000)).toBe(6)
    expect(
      minimumPolls(4_000, [
        { afterMs: 0, pollIntervalMs: 1_000 },
        { afterMs: 2_000, pollIntervalMs: 250 },
      ]),
    ).toBe(2 + 8 + 1)
  })

  it("parses ratio lines of other packages' scripts", () => {
    const [b1] = parseRatioLines(
      "B1",
      "x\nB1 ratio store/raw: **1.21× (per-rep 0.22–3.72)**, target ≤ 1.3×\n",
    )
    expect(b1).toMatchObject({ value: 1.21, met: true, target: "≤ 1.3×", spread: "0.22–3.72" })
    const [b2] = parseRatioLines("B2", "B2 ratio group commit: **4.01× (per-rep 2.58–12.05)**, target ≥ 5×")
    expect(b2).toMatchObject({ value: 4.01, met: false })
  })

  it("keeps other sections verbatim and regenerates only its own", () => {
    const before = [
      "# Benchmarks",
      "",
      "Intro.",
      "",
      "## B1",
      "",
      "B1 prose with numbers 1.21×.",
      "",
      "## B3",
      "",
      "Analysis kept.",
      "",
      Markdown.BEGIN,
      "old numbers",
      Markdown.END,
      "",
      "More analysis.",
      "",
      "## B6",
      "",
      "```sh",
      "## not a heading",
      "```",
      "B6 prose.",
    ].join("\n")
    const after = updateBenchmarks(
      before,
      [
        { id: "B3", title: "t", results: [], markdown: "new numbers", seconds: 1 },
        { id: "B5", title: "t", results: [], markdown: "b5 numbers", seconds: 1 },
      ],
      { ...facts, command: "pnpm bench" },
    )
    expect(after).toContain("B1 prose with numbers 1.21×.")
    expect(after).toContain("Analysis kept.")
    expect(after).toContain("More analysis.")
    expect(after).toContain("new numbers")
    expect(after).not.toContain("old numbers")
    expect(after).toContain("## not a heading\n```\nB6 prose.")
    const headings = Markdown.parse(after).sections.map((s) => s.heading)
    expect(headings).toEqual(["Summary", "B1", "B3", "B5", "B6"])
  })

  it("a partial run keeps the summary rows of the benchmarks it did not run, marked as earlier", () => {
    const outcome = (id: string, value: number, target: string, met: boolean) => ({
      id,
      title: "t",
      results: [{ what: "ratio", value, unit: "×", target, met }],
      seconds: 1,
    })
    const run = (doc: string, command: string, outcomes: ReadonlyArray<ReturnType<typeof outcome>>) =>
      updateBenchmarks(doc, outcomes, { ...facts, command })
    const full = run("", "pnpm bench", [
      outcome("B1", 1.2, "≤ 1.3×", true),
      outcome("B8", 1.9, "≤ 1.5×", false),
    ])
    const second = run(full, "pnpm bench --only B8", [outcome("B8", 1.4, "≤ 1.5×", true)])
    // A second partial run marks nothing twice.
    const third = run(second, "pnpm bench --only B8", [outcome("B8", 1.3, "≤ 1.5×", true)])
    const rows = third.split("\n").filter((line) => /^\| B\d/.test(line))
    expect(rows).toHaveLength(2)
    expect(rows[0]).toMatch(/^\| B1 .*1\.2.*\| met \(earlier run\) *\|$/)
    expect(rows[1]).toMatch(/^\| B8 .*1\.3.*\| met *\|$/)
  })

  it("a partial run keeps the other benchmarks' raw output, marked as earlier, and replaces its own", () => {
    const sqlite = (text: string) =>
      ["B1", "B2"].map((id) => ({ id, title: "t", results: [], raw: text, seconds: 1 }))
    const postgres = (text: string) => ({ id: "B6", title: "t", results: [], raw: text, seconds: 1 })
    const full = updateBenchmarks("", [...sqlite("sqlite one"), postgres("postgres one")], facts)
    const partial = updateBenchmarks(full, sqlite("sqlite two").slice(0, 1), {
      ...facts,
      command: "pnpm bench --only B1",
    })
    const again = updateBenchmarks(partial, sqlite("sqlite three"), {
      ...facts,
      command: "pnpm bench --only B1,B2",
    })
    const raw = (doc: string) => Markdown.generatedOf(Markdown.parse(doc), "Raw") ?? ""
    expect(raw(full).match(/^### .*/gm)).toEqual(["### B1 and B2", "### B6"])
    expect(raw(again).match(/^### .*/gm)).toEqual(["### B1 and B2", "### B6 (earlier run)"])
    expect(raw(again)).toContain("sqlite three")
    expect(raw(again)).toContain("postgres one")
    expect(raw(again)).not.toMatch(/sqlite (one|two)/)
    // The summary keeps B6's row (from the file) and B2's, which only the second run measured again.
    const summary = Markdown.generatedOf(Markdown.parse(partial), "Summary") ?? ""
    expect(summary.match(/^\| B\d+/gm)).toEqual(["| B1", "| B2", "| B6"])
    expect(summary).toContain("earlier run")
  })

  it("starts a document when there is none", () => {
    const out = updateBenchmarks("", [], { ...facts, command: "pnpm bench" })
    expect(out.startsWith("# Benchmarks")).toBe(true)
    expect(out).toContain("## Summary")
  })
})
