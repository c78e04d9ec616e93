/**
 * Child processes for tests. Each child leads a process group of its own (`detached: true`), so
 * that killing the group also kills whatever the child started: a CLI's fake server, a worker's
 * pool. A timed-out test once left a `bin.js resume` child running for 40 minutes after its run;
 * here every group still alive is killed when the test that started it ends (pass, fail or
 * timeout: `vitest.setup.mjs` wires that), the rest when the test file ends, and, as a last
 * resort, when this process exits.
 *
 * A child that spawns through this module in turn (the B6 benchmark's workers, under the fleet
 * test) keeps its children in its own group, so that killing it as a group takes them too.
 *
 * Plain Node, no vitest import: the Postgres fleet harness also runs under the B6 benchmark.
 */
import { spawn } from "node:child_process"

/** Set in the environment of every group leader this module starts. */
const leaderMarker = "MCP_HANDLES_TEST_GROUP_LEADER"
/** This process leads a group started here: its children join it instead of leading their own. */
const nested = process.env[leaderMarker] === "1"

/** Groups started outside a test (a `beforeAll`, a module, a script), killed at the end. */
const outside = new Set()
/** Groups started by the running test; undefined between tests. Tests in a file run one by one. */
let current

const killSet = (pids) => {
  if (pids === undefined) return
  for (const pid of pids) killGroup(pid)
  pids.clear()
}

/**
 * Kills the process group led by `child` (a ChildProcess or a pid; in a nested leader, the child
 * alone). A group that is gone already is not an error: the leader may have exited, and its
 * group with it.
 */
export const killGroup = (child, signal = "SIGKILL") => {
  const pid = typeof child === "number" ? child : child.pid
  if (pid === undefined) return
  try {
    process.kill(nested ? pid : -pid, signal)
  } catch (error) {
    if (error?.code !== "ESRCH") throw error
  }
}

/**
 * `child_process.spawn`, with the child leading a new process group that this module kills (in a
 * nested leader, a member of this process's group, killed alone).
 */
export const spawnGroup = (command, args, options = {}) => {
  const env = { ...(options.env ?? process.env), [leaderMarker]: "1" }
  const child = spawn(command, args, { ...options, env, detached: !nested })
  // No pid: the spawn failed, and the child's "error" event says why.
  if (child.pid !== undefined) (current ?? outside).add(child.pid)
  return child
}

/**
 * Runs a command in a group of its own to its end: its exit code (null when a signal ended it),
 * the signal, and everything it printed. With `timeoutMs`, the group is killed after that long
 * (the result then says SIGKILL, with the output so far); without, the test's own timeout ends
 * it, and the group with it.
 */
export const runGroup = (command, args, { timeoutMs, ...options } = {}) =>
  new Promise((resolve, reject) => {
    const child = spawnGroup(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] })
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => killGroup(child), timeoutMs)
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk) => {
      stdout += chunk
    })
    child.stderr.setEncoding("utf8").on("data", (chunk) => {
      stderr += chunk
    })
    child.once("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    // "close", not "exit": the output is complete only once the pipes are.
    child.once("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })

/** A test begins: what it spawns from now on is killed when it ends. */
export const testStarted = () => {
  killSet(current)
  current = new Set()
}

/** The test ended, however it ended: kill every group it started. */
export const testEnded = () => {
  killSet(current)
  current = undefined
}

/** Kills every group this process started and still tracks. */
export const killAll = () => {
  killSet(current)
  killSet(outside)
}

process.on("exit", killAll)
