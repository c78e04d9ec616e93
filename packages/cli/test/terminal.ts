/**
 * A real terminal for tests: a tmux session of its own (its own server socket), running one
 * command in a pane sized like a terminal window. The test reads the screen as a person would
 * see it and types keys.
 *
 * The tmux server daemonizes out of the test's process group, so it is killed explicitly: when
 * the terminal is closed, and, as a last resort, when this process exits.
 */
import { execFileSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { runGroup } from "../../../scripts/testing/process-groups.mjs"

const has = (command: string, args: ReadonlyArray<string>): boolean => {
  try {
    execFileSync(command, args, { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

/** tmux is on this machine (CI images without it skip the terminal tests, saying why). */
export const tmuxInstalled = has("tmux", ["-V"])

/** zsh and fish, for their completion tests. */
export const zshInstalled = has("zsh", ["--version"])
export const fishInstalled = has("fish", ["--version"])

const servers = new Set<string>()

const killServer = (socket: string) => {
  try {
    execFileSync("tmux", ["-S", socket, "kill-server"], { stdio: "ignore" })
  } catch {
    // Gone already.
  }
  servers.delete(socket)
}

process.on("exit", () => {
  for (const socket of servers) killServer(socket)
})

export interface Terminal {
  /** What the pane shows, with its scrollback, lines joined where they wrapped. */
  readonly screen: () => Promise<string>
  /** The same with the colours and attributes as escape sequences. */
  readonly styled: () => Promise<string>
  /** Types keys, in tmux's names (`Enter`, `C-c`, `Tab`) or as literal text. */
  readonly type: (...keys: ReadonlyArray<string>) => Promise<void>
  /** Resolves with the screen once it matches `pattern`; fails with the screen after `timeoutMs`. */
  readonly waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<string>
  readonly close: () => void
}

let sessions = 0

/**
 * Runs `command` (a shell command line) in a new terminal, `dir` as its working directory, with
 * `env` as its environment. When the command ends, the pane shows `[exit CODE]` and stays.
 */
export const open = async (
  dir: string,
  env: NodeJS.ProcessEnv,
  command: string,
  size: { readonly columns: number; readonly rows: number } = { columns: 150, rows: 45 },
): Promise<Terminal> => {
  sessions += 1
  const socket = join(dir, `tmux-${process.pid}-${sessions}.sock`)
  const script = join(dir, `terminal-${sessions}.sh`)
  // The shell outlives a Ctrl-C meant for the command (a trap is reset to the default in the
  // command itself), so the pane stays to show how the command ended.
  writeFileSync(script, `trap 'true' INT\n${command}\necho "[exit $?]"\nsleep 600\n`)
  const tmux = async (...args: ReadonlyArray<string>) => {
    const ran = await runGroup("tmux", ["-S", socket, ...args], { cwd: dir, env, timeoutMs: 20_000 })
    if (ran.code !== 0) throw new Error(`tmux ${args.join(" ")}: ${ran.stderr}`)
    return ran.stdout
  }
  servers.add(socket)
  await tmux(
    "new-session",
    "-d",
    "-s",
    "test",
    "-x",
    String(size.columns),
    "-y",
    String(size.rows),
    "-c",
    dir,
    `sh ${script}`,
  )
  const screen = () => tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "test")
  return {
    screen,
    styled: () => tmux("capture-pane", "-p", "-e", "-J", "-S", "-", "-t", "test"),
    type: async (...keys) => {
      for (const key of keys) {
        if (/^(Enter|Tab|Escape|BSpace|C-[a-z])$/.test(key)) await tmux("send-keys", "-t", "test", key)
        else await tmux("send-keys", "-t", "test", "-l", "--", key)
      }
    },
    waitFor: async (pattern, timeoutMs = 25_000) => {
      const deadline = Date.now() + timeoutMs
      let last = ""
      for (;;) {
        last = await screen()
        if (pattern.test(last)) return last
        if (Date.now() > deadline) throw new Error(`the terminal never showed ${pattern}; it shows:\n${last}`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    },
    close: () => killServer(socket),
  }
}
