/**
 * Several live instances on one postgres store. Fails on the engine before "Engine v2" (issue 12):
 * the fleet defects it fixes are what this finds.
 */
import { describe } from "vitest"
import { fleetProperty } from "./support.js"

describe("chaos: fleet, postgres store", () => {
  fleetProperty("postgres")
})
