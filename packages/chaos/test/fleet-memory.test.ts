/**
 * Several live instances on one memory store. Fails on the engine before "Engine v2" (issue 12):
 * the fleet defects it fixes are what this finds.
 */
import { describe } from "vitest"
import { fleetProperty } from "./support.js"

describe("chaos: fleet, memory store", () => {
  fleetProperty("memory")
})
