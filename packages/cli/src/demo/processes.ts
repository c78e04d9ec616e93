/**
 * Child processes of the demo: the fake server and the client processes, read line by line.
 *
 * @since 0.1.0
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createInterface } from "node:readline"

/**
 * @since 0.1.0
 * @category models
 */
export interface Child {
  readonly process: ChildProcess
  readonly exited: Promise<number | null>
}

/**
 * Runs a Node script; `onLine` gets each stdout line parsed as JSON (non-JSON lines are skipped).
 *
 * @since 0.1.0
 * @category constructors
 */
export const node = (
  script: string,
  args: ReadonlyArray<string>,
  onLine: (event: Record<string, unknown>) => void,
): Child => {
  const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "pipe"] })
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
    try {
      onLine(JSON.parse(line) as Record<string, unknown>)
    } catch {
      // Not one of ours.
    }
  })
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code, signal) => {
      if (code !== 0 && signal === null && stderr !== "") process.stderr.write(stderr)
      resolve(code)
    }),
  )
  return { process: child, exited }
}

/**
 * Starts the fake server binary and resolves with the URL it prints on its first line.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fakeServer = (bin: string, configFile: string): Promise<{ child: ChildProcess; url: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, "--port", "0", "--config", configFile], {
      stdio: ["ignore", "pipe", "inherit"],
    })
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
    lines.once("line", (url) => resolve({ child, url: url.trim() }))
    child.once("error", reject)
    child.once("exit", (code) => reject(new Error(`the fake server exited with ${code} before listening`)))
  })
