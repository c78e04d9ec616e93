/**
 * Three live instances with push on (subscriptions/listen) on a memory store, with stream drops
 * and half-open streams among the faults: takeovers, cancels and crashes while streams cover the
 * tasks keep every fleet invariant.
 */
import { describe } from "vitest"
import { fleetProperty } from "./support.js"

describe("chaos: fleet with push, memory store", () => {
  fleetProperty("memory", 3, true)
})
