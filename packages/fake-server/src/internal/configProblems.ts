/**
 * A configuration's decoding problems in its author's terms: one line each, with the path to the
 * value (`tools[0].statusMessage`) and, for a key the schema does not know, the key it most
 * likely meant.
 */
import * as ParseResult from "effect/ParseResult"
import * as AST from "effect/SchemaAST"

type Path = ReadonlyArray<PropertyKey>

const render = (path: Path): string =>
  path
    .map((key, i) =>
      typeof key === "number"
        ? `[${key}]`
        : /^[A-Za-z_$][\w$]*$/.test(String(key))
          ? `${i === 0 ? "" : "."}${String(key)}`
          : `[${JSON.stringify(String(key))}]`,
    )
    .join("")

/** Edits from one key to another, two swapped neighbours counting as one (`phaes`, `phase`). */
const distance = (a: string, b: string): number => {
  let before: ReadonlyArray<number> = []
  let previous: ReadonlyArray<number> = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min((previous[j] ?? i) + 1, (current[j - 1] ?? j) + 1, (previous[j - 1] ?? 0) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, (before[j - 2] ?? 0) + 1)
      }
      current.push(best)
    }
    before = previous
    previous = current
  }
  return previous[b.length] ?? 0
}

const words = (key: string): ReadonlyArray<string> =>
  key
    .split(/(?=[A-Z])|[_-]/)
    .map((word) => word.toLowerCase())
    .filter((word) => word.length > 2)

/**
 * The key meant: one a typo away (within a third of its letters), else the only one that shares
 * a word with it (`statusMessage` for `workingMessage`: the protocol's name for what this server
 * calls its working message).
 *
 * @internal
 */
export const suggest = (given: string, known: ReadonlyArray<string>): string | undefined => {
  const scored = known
    .map((key) => ({ key, score: distance(given.toLowerCase(), key.toLowerCase()) }))
    .sort((a, b) => a.score - b.score)
  const best = scored[0]
  if (best !== undefined && best.score <= Math.max(1, Math.floor(given.length / 3))) return best.key
  const mine = new Set(words(given))
  const sharing = known.filter((key) => words(key).some((word) => mine.has(word)))
  return sharing.length === 1 ? sharing[0] : undefined
}

interface Leaf {
  readonly path: Path
  readonly issue: ParseResult.ParseIssue
  /** For a key the schema does not know: the keys it allows there. */
  readonly allowed?: ReadonlyArray<string> | undefined
}

const childrenOf = (issue: ParseResult.Composite): ReadonlyArray<ParseResult.ParseIssue> =>
  Array.isArray(issue.issues) ? issue.issues : [issue.issues as ParseResult.ParseIssue]

const pathOf = (pointer: ParseResult.Pointer): Path =>
  Array.isArray(pointer.path) ? pointer.path : [pointer.path as PropertyKey]

/**
 * The problems at the bottom of the tree. Of a union's members, those that got inside the value
 * count, and of them the closest (the fewest problems): `{ kind: "result", txt }` is a result
 * with an unknown key, not also a `weighted` outcome missing its list. An optional field's "or
 * undefined" never counts when the value was there.
 */
const leaves = (issue: ParseResult.ParseIssue, path: Path, allowed?: ReadonlyArray<string>): Array<Leaf> => {
  switch (issue._tag) {
    case "Composite": {
      const children = childrenOf(issue)
      if (AST.isUnion(issue.ast)) {
        const present = children.filter(
          (child) => !(child._tag === "Type" && AST.isUndefinedKeyword(child.ast)),
        )
        const members = (present.length > 0 ? present : children).map((child) => leaves(child, path))
        // A member that got inside the value (its problems lie deeper) is the one meant.
        const inside = members.filter((member) => member.some((leaf) => leaf.path.length > path.length))
        if (inside.length === 0) return members.flat()
        const fewest = Math.min(...inside.map((member) => member.length))
        return inside.filter((member) => member.length === fewest).flat()
      }
      const keys = AST.isTypeLiteral(issue.ast)
        ? issue.ast.propertySignatures.map((signature) => String(signature.name))
        : undefined
      return children.flatMap((child) => leaves(child, path, keys))
    }
    case "Pointer":
      return leaves(
        issue.issue,
        [...path, ...pathOf(issue)],
        issue.issue._tag === "Unexpected" ? allowed : undefined,
      )
    case "Refinement":
    case "Transformation":
      return leaves(issue.issue, path)
    default:
      return [{ path, issue, allowed }]
  }
}

const messageOf = (leaf: Leaf): string => {
  if (leaf.issue._tag === "Unexpected" && leaf.allowed !== undefined) {
    const near = suggest(String(leaf.path[leaf.path.length - 1]), leaf.allowed)
    return near === undefined
      ? `unknown key (known here: ${leaf.allowed.join(", ")})`
      : `unknown key (did you mean ${near}?)`
  }
  return ParseResult.ArrayFormatter.formatIssueSync(leaf.issue)[0]?.message ?? leaf.issue._tag
}

/**
 * One line per problem. Several members of a union that each expected something else at one
 * place make one line: `Expected "task" | "direct", actual "taks"`.
 *
 * @internal
 */
export const describe = (error: ParseResult.ParseError): ReadonlyArray<string> => {
  const byPath = new Map<string, Array<string>>()
  for (const leaf of leaves(error.issue, [])) {
    const where = render(leaf.path)
    const messages = byPath.get(where) ?? []
    messages.push(messageOf(leaf))
    byPath.set(where, messages)
  }
  return [...byPath].flatMap(([where, messages]) => {
    const expected = messages.map((message) => /^Expected (.*), actual (.*)$/s.exec(message))
    const merged =
      expected.length > 1 && expected.every((match) => match !== null && match[2] === expected[0]?.[2])
        ? [`Expected ${expected.map((match) => match?.[1]).join(" | ")}, actual ${expected[0]?.[2]}`]
        : [...new Set(messages)]
    return merged.map((message) => (where === "" ? message : `${where}: ${message}`))
  })
}
