/** Types of `sigkill.mjs` for the TypeScript drivers and tests. */
import type { ChildProcess } from "node:child_process"
import type { Line } from "./json-lines.mjs"

export declare const say: (fact: object) => void
export declare const sayRecorded: (client: {
  readonly events: () => AsyncIterable<{ readonly _tag: string; readonly to?: string; readonly key: string }>
}) => void

export interface Agent {
  readonly child: ChildProcess
  /** Every line seen so far (a line that is not JSON as `{ text }`). */
  readonly lines: Array<Line>
  /** The first line `pick` accepts; rejects when the process ends without one. */
  readonly next: (pick: (line: Line) => boolean) => Promise<Line>
  /** The exit code, once the process exited and its output is all read. */
  readonly exited: Promise<number | null>
  readonly stderr: () => string
}
export declare const startAgent: (
  script: string,
  args: ReadonlyArray<string>,
  options?: { readonly name?: string; readonly env?: NodeJS.ProcessEnv },
) => Agent

export interface Restarted {
  /** The lines `waitFor` picked, from the first run. */
  readonly seen: ReadonlyArray<Line>
  /** What the restarted agent printed. */
  readonly lines: ReadonlyArray<Line>
  /** From the restart to its end. */
  readonly afterRestartMs: number
}
export declare const killMidCallAndRestart: (options: {
  readonly start: () => Agent
  readonly launched: () => boolean
  readonly waitFor?: ReadonlyArray<(line: Line) => boolean>
}) => Promise<Restarted>

export interface Report {
  readonly client: "durable" | "stock"
  /** Launches of the tool on the server for this run. */
  readonly launches: number
  /** Whether the first launch's result was delivered to a client. */
  readonly firstResultDelivered: boolean
  readonly answer: string | undefined
  /** From the restart to the answer. */
  readonly afterRestartMs: number
}
export declare const runClient: (options: {
  readonly client: Report["client"]
  /** The scratch directory's prefix. */
  readonly prefix: string
  readonly start: (dir: string) => Agent
  /** The server's launches of this run's tool call. */
  readonly launches: () => ReadonlyArray<{ readonly responseDelivered: boolean }>
  readonly print: (line: string) => void
}) => Promise<Report & { readonly lines: ReadonlyArray<Line> }>
export declare const table: (
  reports: ReadonlyArray<Report>,
  names: Readonly<Record<Report["client"], string>>,
) => Array<string>
export declare const conclude: (options: {
  readonly durable: Report
  readonly stock: Report
  readonly ok: boolean
  readonly names: Readonly<Record<Report["client"], string>>
  readonly json: boolean
  readonly print: (line: string) => void
}) => void
export declare const runMain: (main: () => Promise<boolean>) => void
