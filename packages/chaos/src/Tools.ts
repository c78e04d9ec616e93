/**
 * The fake server's tools in the simulated models (every result shape), and the keys the steps
 * call them under.
 *
 * @since 0.1.0
 */
import type * as Config from "@mcp-handles/fake-server/Config"

/**
 * A task that asks for a name after `atMs` of work, then greets it.
 *
 * @since 0.2.0
 * @category constructors
 */
export const asking = (fields: {
  readonly durationMs: number
  readonly pollIntervalMs: number
  readonly atMs: number
}): Config.Tool => ({
  name: "ask",
  shape: "task",
  durationMs: fields.durationMs,
  pollIntervalMs: fields.pollIntervalMs,
  inputSteps: [
    {
      atMs: fields.atMs,
      requests: {
        name: {
          method: "elicitation/create",
          params: { message: "Name?", requestedSchema: { type: "object" } },
        },
      },
    },
  ],
  outcome: { kind: "result", text: "Hello {{inputs.name.content.name|nobody}}" },
})

/**
 * @since 0.1.0
 * @category constants
 */
export const tools: ReadonlyArray<Config.Tool> = [
  { name: "direct", shape: "direct", outcome: { kind: "result", text: "direct {{args.n}}" } },
  { name: "rejected", shape: "direct", outcome: { kind: "error", code: -32042, message: "no" } },
  { name: "task", shape: "task", durationMs: 3_000, pollIntervalMs: 1_000 },
  {
    name: "varying",
    shape: "task",
    durationMs: 9_000,
    pollIntervalMs: [
      { afterMs: 0, pollIntervalMs: 700 },
      { afterMs: 3_000, pollIntervalMs: 2_300 },
    ],
  },
  // No interval from the server: the client's default schedule.
  { name: "silent", shape: "task", durationMs: 4_000 },
  asking({ durationMs: 4_000, pollIntervalMs: 500, atMs: 1_000 }),
  {
    name: "confirm",
    shape: "direct",
    mrtrRounds: [
      {
        ok: {
          method: "elicitation/create",
          params: { message: "Sure?", requestedSchema: { type: "object" } },
        },
      },
    ],
    outcome: { kind: "result", text: "confirmed" },
  },
  { name: "expiring", shape: "task", durationMs: 60_000, ttlMs: 5_000, pollIntervalMs: 1_000 },
  { name: "stubborn", shape: "task", durationMs: 6_000, cancellable: false, pollIntervalMs: 1_500 },
  {
    name: "idem",
    shape: "task",
    durationMs: 2_000,
    pollIntervalMs: 800,
    annotations: { idempotentHint: true },
  },
  {
    name: "coin",
    shape: { taskProbability: 0.5 },
    durationMs: 1_500,
    pollIntervalMs: 600,
    outcome: {
      weighted: [
        { weight: 3, outcome: { kind: "result", text: "ok" } },
        { weight: 1, outcome: { kind: "error", code: -32050, message: "task failed" } },
      ],
    },
  },
]

/**
 * @since 0.1.0
 * @category constants
 */
export const names: ReadonlyArray<string> = tools.map((tool) => tool.name)

/**
 * The tools a server of `generation` serves. 2025-11-25 has no multi round-trip before a task
 * exists: there `confirm` answers directly, without asking.
 *
 * @since 0.3.0
 */
export const toolsFor = (generation: string | undefined): ReadonlyArray<Config.Tool> =>
  generation === "2025-11-25"
    ? tools.map((tool) => {
        if (tool.mrtrRounds === undefined) return tool
        const { mrtrRounds: _rounds, ...rest } = tool
        return rest
      })
    : tools

/**
 * The tool a task of the ledger ran.
 *
 * @since 0.2.0
 */
export const byName = (name: string): Config.Tool | undefined => tools.find((tool) => tool.name === name)

/**
 * A call of one tool: its key is `<tool>-<n>`.
 *
 * @since 0.1.0
 * @category models
 */
export interface KeyRef {
  readonly tool: string
  readonly n: number
}

/**
 * @since 0.1.0
 */
export const keyOf = (ref: KeyRef): string => `${ref.tool}-${ref.n}`
