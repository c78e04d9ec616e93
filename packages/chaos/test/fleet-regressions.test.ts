/**
 * Counterexamples the fleet model found on the engine before "Engine v2" (issue 12), one per
 * defect class, shrunk (or, where noted, written by hand to the same shape), and two it found on
 * Engine v2 itself. Each replays exactly; each failed on the engine it was found on.
 */
import { describe, expect, it } from "vitest"
import { replayFleet } from "../src/fleet-property.js"
import type { FleetSequence, FleetSetup, FleetStep } from "../src/fleet-step.js"
import type { FaultMethod } from "../src/world.js"

const setup = (fields: Partial<FleetSetup>): FleetSetup => ({
  instances: 2,
  leaseMs: 2_000,
  callTimeoutMs: null,
  inDoubtPolicy: "surface",
  dedup: false,
  durableServer: false,
  seed: 1,
  ...fields,
})

const on = (
  kind: "call" | "settle" | "cancel" | "reissue" | "abandon",
  slot: number,
  tool: string,
): FleetStep => ({
  kind,
  slot,
  tool,
  n: 0,
})
const advance = (ms: number): FleetStep => ({ kind: "advance", ms })
const fault = (method: FaultMethod, kind: string, ms?: number): FleetStep =>
  ({ kind: "fault", fault: { method, kind, ...(ms === undefined ? {} : { ms }) } }) as FleetStep

const cases: ReadonlyArray<readonly [string, FleetSequence]> = [
  [
    "1. a dispatch that outlives its lease keeps its task id (seed 2)",
    {
      setup: setup({}),
      steps: [fault("tools/call", "slow", 3_000), on("call", 3, "varying"), { kind: "serverRestart" }],
    },
  ],
  [
    "2. a cancel from another instance during a dispatch does not lose the task id (by hand)",
    {
      setup: setup({ leaseMs: 4_000 }),
      steps: [
        fault("tools/call", "slow", 3_000),
        on("call", 0, "task"),
        advance(500),
        on("cancel", 1, "task"),
        advance(8_000),
      ],
    },
  ],
  [
    "3. a late answer after a reissue by policy is recorded, and the reissue waited for it (by hand)",
    {
      setup: setup({ instances: 1, callTimeoutMs: 2_000, inDoubtPolicy: "reissue-if-idempotent" }),
      steps: [fault("tools/call", "late", 5_000), on("call", 0, "idem"), advance(8_000)],
    },
  ],
  [
    "3. a late answer after an explicit reissue is recorded (by hand)",
    {
      setup: setup({ instances: 1, callTimeoutMs: 2_000 }),
      steps: [
        fault("tools/call", "late", 5_000),
        on("call", 0, "task"),
        advance(2_500),
        on("reissue", 0, "task"),
        advance(8_000),
      ],
    },
  ],
  [
    "1. another instance reissues by policy only after the dispatch deadline (seed 702)",
    {
      setup: setup({ inDoubtPolicy: "reissue-if-idempotent" }),
      steps: [fault("tools/call", "slow", 3_000), on("call", 1, "idem"), { kind: "answer" }],
    },
  ],
  [
    "3. a reissue by policy waits for the first answer of the same process (seed 703)",
    {
      setup: setup({ instances: 1, callTimeoutMs: 2_000, inDoubtPolicy: "reissue-if-idempotent" }),
      steps: [fault("tools/call", "slow", 3_000), on("call", 0, "idem"), { kind: "answer" }],
    },
  ],
  [
    "4. a 503 after the server created a task is in doubt, not a second launch (seed 708)",
    {
      setup: setup({ instances: 1 }),
      steps: [fault("tools/call", "503-after"), on("call", 0, "varying")],
    },
  ],
  [
    "4. a 503 after the server processed tools/call is in doubt, not retried (seed 401)",
    {
      setup: setup({ instances: 1 }),
      steps: [fault("tools/call", "503-after"), on("call", 0, "direct"), { kind: "refuse" }],
    },
  ],
  [
    "2/5. a cancel from another instance starts no second driver: no poll sooner than the interval (by hand)",
    {
      setup: setup({}),
      steps: [on("call", 0, "varying"), advance(700), on("cancel", 1, "varying"), advance(9_000)],
    },
  ],
  [
    "6. settle returns after another instance's cancel took the row (by hand)",
    {
      setup: setup({}),
      steps: [
        on("call", 0, "varying"),
        on("settle", 0, "varying"),
        advance(700),
        on("cancel", 1, "varying"),
        advance(9_000),
      ],
    },
  ],
  [
    "7. an interrupted cancel leaves no dead driver behind (by hand)",
    {
      setup: setup({ instances: 1 }),
      steps: [
        on("call", 0, "task"),
        advance(500),
        fault("tasks/cancel", "slow", 3_000),
        { kind: "cancel", slot: 0, tool: "task", n: 0, patience: 500 },
        on("settle", 0, "task"),
        advance(8_000),
      ],
    },
  ],
  [
    "8. an input handler's defect does not stop the row's polling for good (seed 601)",
    {
      setup: setup({ instances: 1 }),
      steps: [{ kind: "input", mode: "defect" }, on("call", 0, "ask"), advance(3_500), { kind: "refuse" }],
    },
  ],
  [
    "9. input is asked once across instances while a human takes longer than the lease (seed 100)",
    {
      setup: setup({}),
      steps: [
        fault("tools/call", "slow", 3_000),
        on("call", 0, "ask"),
        advance(426),
        advance(499),
        advance(5_575),
        { kind: "serverRestart" },
      ],
    },
  ],
  [
    "leases are held while tasks/get is in flight: no two instances poll one task at once (seed 405)",
    {
      setup: setup({}),
      steps: [
        on("call", 0, "varying"),
        fault("tasks/get", "slow", 3_000),
        { kind: "close", slot: 0 },
        advance(1_000),
        { kind: "arm", slot: 0, point: { at: "fetch", method: "tools/call", nth: 1, phase: "before-send" } },
      ],
    },
  ],
  [
    "11. two cancels at once in one process start one driver: no early polls (by hand)",
    {
      setup: setup({ instances: 1 }),
      steps: [
        on("call", 0, "stubborn"),
        advance(700),
        fault("tasks/cancel", "slow", 3_000),
        on("cancel", 0, "stubborn"),
        on("cancel", 0, "stubborn"),
        advance(9_000),
      ],
    },
  ],
  [
    "12. an abandoned call's late task is recorded and cancelled (by hand)",
    {
      setup: setup({ instances: 1, callTimeoutMs: 2_000 }),
      steps: [
        fault("tools/call", "late", 5_000),
        on("call", 0, "task"),
        advance(2_500),
        on("abandon", 0, "task"),
        advance(8_000),
      ],
    },
  ],
  [
    "an input answer is not sent twice across a crash after it left (by hand)",
    {
      setup: setup({ instances: 1 }),
      steps: [
        on("call", 0, "ask"),
        {
          kind: "arm",
          slot: 0,
          point: { at: "fetch", method: "tasks/update", nth: 1, phase: "after-answer" },
        },
        advance(1_500),
        { kind: "answer" },
        { kind: "start", slot: 0, sameId: true },
        advance(5_000),
      ],
    },
  ],
]

/** Found on Engine v2 itself (9a74224) by the fleet properties; fixed in 8a9b382 and 5a6007f. */
const foundOnV2: ReadonlyArray<readonly [string, FleetSequence]> = [
  [
    "an input answer whose tasks/update came back 503 after processing is not sent again (seed 2026)",
    {
      setup: setup({ instances: 1 }),
      steps: [
        on("call", 0, "ask"),
        { kind: "input", mode: "slow" },
        fault("tasks/update", "503-after"),
        advance(5_500),
        on("settle", 0, "direct"),
      ],
    },
  ],
  [
    "a cancel from another instance is sent before the driver's next poll (seed 7)",
    {
      setup: setup({}),
      steps: [
        on("call", 1, "silent"),
        fault("tasks/get", "slow", 3_000),
        on("cancel", 0, "silent"),
        advance(1_000),
      ],
    },
  ],
]

describe("chaos fleet regressions (fail before Engine v2, issue 12)", () => {
  for (const [name, sequence] of [...cases, ...foundOnV2]) {
    it(name, async () => {
      await expect(replayFleet("memory", sequence)).resolves.toBeDefined()
    }, 60_000)
  }

  it("9. on SQLite too: input asked once across instances (seed 801, sqlite)", async () => {
    const sequence: FleetSequence = {
      setup: setup({}),
      steps: [on("call", 3, "ask"), advance(3_500), on("settle", 0, "direct")],
    }
    await expect(replayFleet("sqlite", sequence)).resolves.toBeDefined()
  }, 60_000)
})
