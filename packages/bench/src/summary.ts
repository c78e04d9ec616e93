/**
 * BENCHMARKS.md's summary and raw-output sections after a run. Pure (the caller passes the
 * machine facts), so that a partial run's merge is tested without running a benchmark.
 */
import { formatValue, type TargetResult, table } from "./common.js"
import * as Markdown from "./markdown.js"

export interface BenchOutcome {
  readonly id: string
  readonly title: string
  readonly results: ReadonlyArray<TargetResult>
  /** Generated Markdown for this package's own sections (B3–B5, B7–B9). */
  readonly markdown?: string
  /** Raw stdout of another package's script (B1, B2, B6). */
  readonly raw?: string
  /** Why the benchmark did not run, or how it failed. */
  readonly problem?: string
  readonly seconds: number
}

export interface RunFacts {
  readonly command: string
  readonly loadBefore: string
  readonly loadAfter: string
  /** The machine line: CPUs, model, memory, Node, platform. */
  readonly machine: string
  /** YYYY-MM-DD. */
  readonly date: string
}

const summaryHeader = ["id", "what", "measured", "spread", "target", "result"]

const summaryRowsOf = (outcomes: ReadonlyArray<BenchOutcome>): Array<Array<string>> =>
  outcomes.flatMap((o) =>
    o.results.length === 0
      ? [[o.id, o.title, "—", "—", "—", o.problem ?? "no result parsed"]]
      : o.results.map((r) => [
          o.id,
          r.what,
          formatValue(r),
          r.spread ?? "—",
          r.target,
          `${r.met ? "met" : "**missed**"}${o.problem === undefined ? "" : ` (${o.problem.split("\n")[0]})`}`,
        ]),
  )

export const summaryTable = (outcomes: ReadonlyArray<BenchOutcome>): string =>
  table(summaryHeader, summaryRowsOf(outcomes))

export const ORDER = ["Summary", "B1", "B2", "B3", "B4", "B5", "B6", "B7", "B8", "B9", "Raw"]

const earlier = " (earlier run)"

/** The benchmark ids a heading or row names (`B1 and B2` names both). */
const idsIn = (text: string): Array<string> => text.match(/\bB\d+\b/g) ?? []

/**
 * The summary rows of the benchmarks this run did not measure (`--only`), kept from the file and
 * marked as from an earlier run: a partial run does not drop the other results from the summary.
 */
const keptSummaryRows = (doc: Markdown.Document, measured: ReadonlySet<string>): Array<Array<string>> =>
  (Markdown.generatedOf(doc, "Summary") ?? "")
    .split("\n")
    .filter((line) => /^\|\s*B\d/.test(line))
    .map((line) =>
      line
        .split("|")
        .slice(1, -1)
        .map((cell) => cell.trim()),
    )
    .filter((row) => !measured.has(row[0] ?? ""))
    .map((row) =>
      row.map((cell, i) => (i === row.length - 1 && !cell.endsWith(earlier) ? `${cell}${earlier}` : cell)),
    )

const byBenchmark = <A extends { readonly id: string }>(items: ReadonlyArray<A>): Array<A> => {
  const rank = (item: A) => {
    const i = ORDER.indexOf(item.id)
    return i < 0 ? ORDER.length : i
  }
  return [...items].sort((a, b) => rank(a) - rank(b))
}

interface RawChunk {
  /** The first benchmark the chunk is about, for ordering. */
  readonly id: string
  readonly heading: string
  readonly body: string
}

/** The `### ` chunks of the raw-output section's generated part. */
const rawChunksOf = (doc: Markdown.Document): Array<RawChunk> =>
  (Markdown.generatedOf(doc, "Raw") ?? "")
    .split(/^### (?=B\d)/m)
    .slice(1)
    .map((chunk) => {
      const newline = chunk.indexOf("\n")
      const heading = (newline < 0 ? chunk : chunk.slice(0, newline)).trim()
      return {
        id: idsIn(heading)[0] ?? heading,
        heading,
        body: newline < 0 ? "" : chunk.slice(newline + 1).trim(),
      }
    })

/** This run's raw output: one chunk per script run (B1 and B2 share the SQLite package's). */
const rawChunksOfRun = (outcomes: ReadonlyArray<BenchOutcome>): Array<RawChunk> =>
  outcomes
    .filter((o) => o.raw !== undefined || (o.problem !== undefined && o.markdown === undefined))
    .map((o) => ({
      id: o.id,
      heading: o.raw !== undefined && (o.id === "B1" || o.id === "B2") ? "B1 and B2" : o.id,
      body: [
        o.problem === undefined ? "" : `Problem: ${o.problem.split("\n")[0]}\n`,
        o.raw === undefined || o.raw === "" ? "(no output)" : o.raw,
      ]
        .join("\n")
        .trim(),
    }))
    .filter((chunk, i, all) => all.findIndex((x) => x.heading === chunk.heading) === i)

/**
 * The raw-output chunks after a run: this run's, and the earlier ones about benchmarks it did not
 * measure, their heading marked as earlier.
 */
const mergedRawChunks = (doc: Markdown.Document, outcomes: ReadonlyArray<BenchOutcome>): Array<RawChunk> => {
  const measured = new Set(outcomes.map((o) => o.id))
  const kept = rawChunksOf(doc)
    .filter((chunk) => !idsIn(chunk.heading).some((id) => measured.has(id)))
    .map((chunk) =>
      chunk.heading.endsWith(earlier) ? chunk : { ...chunk, heading: `${chunk.heading}${earlier}` },
    )
  return byBenchmark([...kept, ...rawChunksOfRun(outcomes)])
}

/** BENCHMARKS.md after a run: the summary, B3–B5, B7–B9 and the raw output regenerated; the rest kept. */
export const updateBenchmarks = (
  current: string,
  outcomes: ReadonlyArray<BenchOutcome>,
  facts: RunFacts,
): string => {
  let doc = Markdown.parse(current.trim() === "" ? "# Benchmarks\n" : current)
  const measured = new Set(outcomes.map((o) => o.id))
  const rows = byBenchmark(
    [...keptSummaryRows(doc, measured), ...summaryRowsOf(outcomes)].map((row) => ({ id: row[0] ?? "", row })),
  ).map((r) => r.row)
  const summary = [
    `Last \`${facts.command}\` on ${facts.date}: ${facts.machine}. Load average before ${facts.loadBefore}, after ${facts.loadAfter} (other sessions share this machine).${rows.some((row) => (row[row.length - 1] ?? "").endsWith(earlier)) ? ` Rows marked "${earlier.trim()}" were not measured by it: they are kept from an earlier run, whose load and method their sections state.` : ""}`,
    "",
    table(summaryHeader, rows),
    "",
    "Each benchmark's section below has its method, raw numbers and analysis. B1, B2 and B6 are written by their packages; their scripts' raw output is in the last section.",
  ].join("\n")
  doc = Markdown.upsertGenerated(doc, "Summary", "Summary", summary, ORDER)
  for (const o of outcomes) {
    if (o.markdown === undefined) continue
    doc = Markdown.upsertGenerated(doc, o.id, `${o.id}`, o.markdown, ORDER)
  }
  const raw = mergedRawChunks(doc, outcomes)
  if (raw.length > 0) {
    doc = Markdown.upsertGenerated(
      doc,
      "Raw",
      "Raw output of the last `pnpm bench` (B1, B2, B6)",
      raw.map((chunk) => `### ${chunk.heading}\n\n${chunk.body}`).join("\n\n"),
      ORDER,
    )
  }
  return Markdown.render(doc)
}
