import { describe } from "vitest"
import { modelProperty } from "./support.js"

describe("chaos: model-based, sqlite store", () => {
  modelProperty("sqlite")
})
