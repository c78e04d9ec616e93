/** Types of `json-lines.mjs` for the TypeScript tests. */
import type { ChildProcess } from "node:child_process"

export type Line = Record<string, unknown>
export interface JsonLines {
  /** Every line seen so far, in order. */
  readonly lines: Array<Line>
  /** The first line `pick` accepts; rejects when the process ends without one. */
  readonly next: (pick: (line: Line) => boolean) => Promise<Line>
  /** The process's exit code, once it has exited. */
  readonly exited: Promise<number | null>
}
export declare const readJsonLines: (child: ChildProcess, name?: string) => JsonLines
