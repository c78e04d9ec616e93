import { describe } from "vitest"
import { modelProperty } from "./support.js"

describe("chaos: model-based, memory store", () => {
  modelProperty("memory")
})
