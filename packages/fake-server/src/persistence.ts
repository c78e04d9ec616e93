import type { TaskRecord } from "./internal/task-record.js"

export type { TaskPlan, TaskRecord } from "./internal/task-record.js"

/**
 * Where a "durable" fake server keeps its tasks. Without one, `restart()` loses every task (the
 * in-memory server of a crashed process); with one, tasks come back after a restart.
 */
export interface TaskPersistence {
  load(): readonly TaskRecord[]
  save(tasks: readonly TaskRecord[]): void
}

/** Durable across `restart()` within one process: a stand-in for a database. */
export const memoryPersistence = (): TaskPersistence => {
  let saved: TaskRecord[] = []
  return {
    load: () => structuredClone(saved),
    save: (tasks) => {
      saved = structuredClone([...tasks])
    },
  }
}
