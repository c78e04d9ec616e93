/**
 * Bugs the chaos tests found, each pinned by the shrunk sequence that showed it. They replay
 * strictly (no tolerated causes) and fail until core is fixed.
 */
import { describe, expect, it } from "vitest"
import * as Model from "../src/Model.js"

const setup: Model.Sequence["setup"] = {
  inDoubtPolicy: "surface",
  dedup: false,
  durableServer: false,
  background: false,
  seed: 1,
}

describe("chaos regressions", () => {
  // engine.ts pollFailure: after a tasks/get the server answered but whose answer was lost (500,
  // cut connection, garbled body), the retry comes after the transport backoff (~500 ms), sooner
  // than the task's last pollIntervalMs (700 ms): the server sees an early poll.
  it("a poll whose answer was lost is retried no sooner than the task's interval", async () => {
    await expect(
      Model.replay("memory", {
        setup,
        steps: [
          { kind: "call", tool: "varying", n: 0 },
          { kind: "fault", fault: { method: "tasks/get", kind: "500-after" } },
          { kind: "advance", ms: 3_000 },
        ],
      }),
    ).resolves.toBeDefined()
  })

  // engine.ts advance/capAtDeadline: the next poll is moved forward to the TTL deadline, sooner
  // than pollIntervalMs after the previous poll whenever the deadline does not fall on the
  // interval grid (here one refused poll shifts the grid by ~400 ms).
  it("the TTL backstop never polls sooner than the task's interval", async () => {
    await expect(
      Model.replay("memory", {
        setup,
        steps: [
          { kind: "fault", fault: { method: "tasks/get", kind: "refused" } },
          { kind: "call", tool: "expiring", n: 0 },
          { kind: "advance", ms: 8_000 },
        ],
      }),
    ).resolves.toBeDefined()
  })

  // Transition.ts Reissued sets nextPollAt: null. When the reissuing process stops before the
  // re-sent call is answered (crash, close, or waiting on input as here), the row stays pending
  // with nothing due: claimDue never returns it, the reconciler never marks it in doubt, and it
  // rests pending forever (liveness).
  it("a reissued call whose process stopped before the answer becomes in doubt again", async () => {
    await expect(
      Model.replay("memory", {
        setup,
        steps: [
          { kind: "call", tool: "confirm", n: 0 },
          { kind: "crash" },
          { kind: "reissue", tool: "confirm", n: 0 },
        ],
      }),
    ).resolves.toBeDefined()
  })
})
