/**
 * The demo's workload: one fake server configuration and one batch of calls with mixed result
 * shapes. Shared by the orchestrator and its client processes.
 *
 * @since 0.1.0
 */
import type * as Config from "@mcp-handles/fake-server/Config"

/**
 * @since 0.1.0
 * @category constants
 */
export const config: Config.Config = {
  // A server that deduplicates on the idempotency key makes re-issuing an in-doubt call safe.
  deduplicateByKey: true,
  tools: [
    {
      name: "lookup",
      description: "A quick lookup: answered directly, no task.",
      shape: "direct",
      outcome: { kind: "result", text: "{{args.word}}: found" },
    },
    {
      name: "report",
      description: "Writes one chapter: slow, so it runs as a task.",
      shape: "task",
      durationMs: 3_000,
      pollIntervalMs: 500,
      workingMessage: "writing chapter {{args.chapter}}",
      outcome: { kind: "result", text: "chapter {{args.chapter}} written" },
    },
    {
      name: "delete_files",
      description: "Asks for confirmation mid-task.",
      shape: "task",
      durationMs: 1_500,
      pollIntervalMs: 300,
      inputSteps: [
        {
          atMs: 700,
          statusMessage: "waiting for confirmation",
          requests: {
            confirm: {
              method: "elicitation/create",
              params: {
                mode: "form",
                message: "Delete the build cache?",
                requestedSchema: { type: "object", properties: { confirm: { type: "boolean" } } },
              },
            },
          },
        },
      ],
      outcome: {
        kind: "result",
        text: "deleted {{args.path}} (confirmed: {{inputs.confirm.content.confirm}})",
      },
    },
    {
      name: "render",
      description: "Outlives its TTL: the server forgets it before it finishes.",
      shape: "task",
      durationMs: 60_000,
      ttlMs: 1_500,
      pollIntervalMs: 400,
      workingMessage: "rendering",
    },
    {
      name: "archive",
      description: "Slow to answer tools/call: in flight when the client dies.",
      shape: "task",
      durationMs: 1_000,
      pollIntervalMs: 300,
      outcome: { kind: "result", text: "archived {{args.bucket}}" },
    },
  ],
  // The first archive call takes 3 s to be answered: the client is killed before it is, so
  // nobody knows whether it launched. Only that first call: a re-issue is answered at once.
  faults: [
    { when: { method: "tools/call", tool: "archive", nth: 1 }, fault: { kind: "latency", ms: 3_000 } },
  ],
}

/**
 * @since 0.1.0
 * @category models
 */
export interface DemoCall {
  readonly key: string
  readonly tool: string
  readonly args: Readonly<Record<string, string | number>>
  /** What it demonstrates, for the table. */
  readonly shape: string
  /** Not answered when the client is killed (the parent does not wait for it). */
  readonly inFlight?: true
}

/**
 * @since 0.1.0
 * @category constants
 */
export const calls: ReadonlyArray<DemoCall> = [
  { key: "lookup-1", tool: "lookup", args: { word: "tide" }, shape: "direct" },
  { key: "lookup-2", tool: "lookup", args: { word: "moon" }, shape: "direct" },
  { key: "report-1", tool: "report", args: { chapter: 1 }, shape: "task" },
  { key: "report-2", tool: "report", args: { chapter: 2 }, shape: "task" },
  { key: "report-3", tool: "report", args: { chapter: 3 }, shape: "task" },
  { key: "delete-1", tool: "delete_files", args: { path: "/tmp/cache" }, shape: "task + input" },
  { key: "render-1", tool: "render", args: { scene: "harbour" }, shape: "task, expires" },
  { key: "archive-1", tool: "archive", args: { bucket: "logs" }, shape: "task, slow answer", inFlight: true },
]

/**
 * The answer the demo gives every input request.
 *
 * @since 0.1.0
 * @category constants
 */
export const confirmation = { action: "accept", content: { confirm: true } }
