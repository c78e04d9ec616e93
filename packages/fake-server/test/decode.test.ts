import * as Either from "effect/Either"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Config from "../src/Config.js"
import * as Profile from "../src/Profile.js"

const problemsOf = (input: unknown): ReadonlyArray<string> =>
  Either.match(Config.decode(input), { onLeft: (error) => error.problems, onRight: () => [] })

const toolKeys = Object.keys(Config.Tool.fields)

describe("Config.decode", () => {
  it("takes the shipped profile as it is", () => {
    expect(Config.decode(Profile.conformance)).toEqual(Either.right(Profile.conformance))
  })

  it("refuses a misspelt key, naming its path and the key meant", () => {
    expect(problemsOf({ tools: [{ name: "job", statusMessage: "working on it" }] })).toEqual([
      "tools[0].statusMessage: unknown key (did you mean workingMessage?)",
    ])
    expect(
      problemsOf({
        seeed: 3,
        tools: [{ name: "job", durations: 10, outcome: { kind: "result", txt: "done" } }],
        defaults: { pollInterval: 100 },
        faults: [{ when: { nth: 1 }, fault: { kind: "drop", phaes: "before" } }],
      }),
    ).toEqual([
      "seeed: unknown key (did you mean seed?)",
      "tools[0].durations: unknown key (did you mean durationMs?)",
      "tools[0].outcome.txt: unknown key (did you mean text?)",
      "defaults.pollInterval: unknown key (did you mean pollIntervalMs?)",
      "faults[0].fault.phaes: unknown key (did you mean phase?)",
    ])
  })

  it("lists the keys it knows where none is close", () => {
    const [problem] = problemsOf({ tools: [{ name: "job", zzzz: 1 }] })
    expect(problem).toMatch(
      /^tools\[0\]\.zzzz: unknown key \(known here: shape, durationMs, .*workingMessage/,
    )
  })

  it("names a wrong value once, with every form it could take", () => {
    expect(problemsOf({ tools: [{ name: "job", shape: "taks" }] })).toEqual([
      'tools[0].shape: Expected "task" | "direct" | { readonly taskProbability: number }, actual "taks"',
    ])
    expect(problemsOf({})).toEqual(['tools: a config needs a "tools" array'])
  })

  it("leaves free-form JSON alone (input schemas, request params, result content)", () => {
    const config = {
      tools: [
        {
          name: "job",
          inputSchema: { type: "object", "x-anything": { nested: [1, "two"] } },
          inputSteps: [{ atMs: 0, requests: { ask: { method: "elicitation/create", params: { any: 1 } } } }],
          outcome: { kind: "result", content: [{ type: "text", text: "hi", extra: true }] },
        },
      ],
    }
    expect(Config.decode(config)).toEqual(Either.right(config))
  })

  it("refuses every key a tool does not have, at its path", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((key) => !toolKeys.includes(key) && key !== "__proto__"),
        (key) => {
          const problems = problemsOf({ tools: [{ name: "job", [key]: 1 }] })
          expect(problems).toHaveLength(1)
          expect(problems[0]).toContain(": unknown key (")
          expect(problems[0]?.startsWith("tools[0]")).toBe(true)
        },
      ),
    )
  })
})
