/** Types of `process-groups.mjs` for the TypeScript tests. */
import type { ChildProcess, SpawnOptions, spawn } from "node:child_process"

export declare const spawnGroup: typeof spawn
export declare const killGroup: (child: ChildProcess | number, signal?: NodeJS.Signals) => void
export interface Ran {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}
export declare const runGroup: (
  command: string,
  args: ReadonlyArray<string>,
  options?: Omit<SpawnOptions, "stdio" | "detached"> & { readonly timeoutMs?: number },
) => Promise<Ran>
export declare const testStarted: () => void
export declare const testEnded: () => void
export declare const killAll: () => void
