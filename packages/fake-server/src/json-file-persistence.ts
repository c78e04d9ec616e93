import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import type { TaskPersistence, TaskRecord } from "./persistence.js"

/**
 * Tasks kept in a JSON file, so they survive a real process restart of the binary. Writes go to a
 * temporary file that is renamed over the old one: a crash never leaves half a file behind.
 */
export const jsonFilePersistence = (path: string): TaskPersistence => ({
  load: () => {
    if (!existsSync(path)) return []
    const parsed = JSON.parse(readFileSync(path, "utf8")) as { tasks?: TaskRecord[] }
    return Array.isArray(parsed.tasks) ? parsed.tasks : []
  },
  save: (tasks) => {
    const temporary = `${path}.tmp`
    writeFileSync(temporary, JSON.stringify({ tasks }), { mode: 0o600 })
    renameSync(temporary, path)
  },
})
