/**
 * One live process per instance id, for a database file only processes of this host can open:
 * a lock file beside the database names the process holding the id. A file whose process is
 * gone (a crash, SIGKILL) is stale and taken over at once; clients in one process share it.
 */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import { InstanceIdInUse, StoreError } from "@mcp-handles/core/HandleStore"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it exists, it is just not ours to signal.
    return (error as { code?: unknown }).code === "EPERM"
  }
}

/** Holders in this process, by lock file: clients of one process share a hold. */
const held = new Map<string, number>()

const lockPath = (filename: string, instanceId: string) =>
  `${filename}.instance-${crypto.createHash("sha256").update(instanceId).digest("hex").slice(0, 16)}.lock`

const acquire = (path: string, instanceId: string): void => {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = fs.openSync(path, "wx", 0o600)
      fs.writeSync(fd, `${process.pid}\n${instanceId}\n`)
      fs.closeSync(fd)
      return
    } catch (error) {
      if ((error as { code?: unknown }).code !== "EEXIST") throw error
    }
    const pid = Number.parseInt(fs.readFileSync(path, "utf8").split("\n")[0] ?? "", 10)
    if (Number.isInteger(pid) && pid !== process.pid && isAlive(pid)) {
      throw new InstanceIdInUse({ instanceId, holder: `process ${pid} on this host` })
    }
    // Stale (its process is gone) or our own from a client that did not close: take it over.
    fs.rmSync(path, { force: true })
  }
  throw new InstanceIdInUse({ instanceId, holder: "a process racing for the same lock file" })
}

export const lockInstance = (
  filename: string,
  instanceId: string,
): Effect.Effect<void, InstanceIdInUse | StoreError, Scope.Scope> =>
  filename === ":memory:"
    ? Effect.void
    : Effect.acquireRelease(
        Effect.try({
          try: () => {
            const path = lockPath(filename, instanceId)
            const count = held.get(path) ?? 0
            if (count === 0) acquire(path, instanceId)
            held.set(path, count + 1)
            return path
          },
          catch: (error) =>
            error instanceof InstanceIdInUse
              ? error
              : new StoreError({
                  operation: "lockInstance",
                  message: `cannot lock the instance id: ${String(error)}`,
                }),
        }),
        (path) =>
          Effect.sync(() => {
            const count = (held.get(path) ?? 1) - 1
            if (count > 0) return void held.set(path, count)
            held.delete(path)
            fs.rmSync(path, { force: true })
          }),
      ).pipe(Effect.asVoid)
