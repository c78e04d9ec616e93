/**
 * The command line, read once before the parser sees it: requests for help and the version are
 * answered here, and unknown commands, unknown options and stray arguments are refused in one
 * line with a suggestion (`mcp-handles: unknown option --jsn (did you mean --json?)`), from the
 * same definitions the parser uses.
 *
 * @since 0.2.0
 */
import * as Help from "./Help.js"
import type * as Spec from "./Spec.js"

/**
 * What to do with a command line.
 *
 * @since 0.2.0
 * @category models
 */
export type Plan =
  | { readonly _tag: "Help"; readonly command: Spec.CommandDoc | undefined }
  | { readonly _tag: "Version" }
  | { readonly _tag: "Refuse"; readonly message: string }
  | { readonly _tag: "Run"; readonly command: Spec.CommandDoc }

/** Edits between two words, a swap of two neighbours counting as one (`lsit` is one from `list`). */
const distance = (a: string, b: string): number => {
  const d: Array<Array<number>> = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  )
  const at = (i: number, j: number) => d[i]?.[j] ?? Number.POSITIVE_INFINITY
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(i - 2, j - 2) + 1)
      const row = d[i]
      if (row !== undefined) row[j] = best
    }
  }
  return at(a.length, b.length)
}

/**
 * The closest of `candidates` to `given`, when one is close enough to be a typo: a prefix of it,
 * or within about a third of its letters.
 *
 * @since 0.2.0
 */
export const suggest = (given: string, candidates: ReadonlyArray<string>): string | undefined => {
  const bare = (s: string) => s.replace(/^-+/, "").toLowerCase()
  const word = bare(given)
  if (word === "") return undefined
  const prefixed = candidates.filter((c) => bare(c).startsWith(word))
  if (prefixed.length === 1) return prefixed[0]
  let best: { readonly candidate: string; readonly score: number } | undefined
  for (const candidate of candidates) {
    const score = distance(word, bare(candidate))
    if (best === undefined || score < best.score) best = { candidate, score }
  }
  return best !== undefined && best.score <= Math.max(1, Math.floor(word.length / 3))
    ? best.candidate
    : undefined
}

const unknown = (what: string, given: string, candidates: ReadonlyArray<string>, help: string): string => {
  const near = suggest(given, candidates)
  return `unknown ${what} ${given} (${near === undefined ? `see ${help}` : `did you mean ${near}?`})`
}

/**
 * Words people type for a command that is an option of another one here: the command line
 * that does it. Their typos are caught too (they join the candidates of a suggestion).
 *
 * @since 0.2.0
 * @category constants
 */
export const pointers: Readonly<Record<string, string>> = {
  watch: "list --watch",
  answer: "resume --answer KEY=JSON",
  ls: "list",
  retry: "reissue KEY",
}

/** An unknown command: the command line it stands for, else the closest command's name. */
const unknownCommand = (given: string, names: ReadonlyArray<string>): string => {
  const near = suggest(given, [...names, ...Object.keys(pointers).filter((word) => !names.includes(word))])
  const pointer = near === undefined ? undefined : pointers[near]
  const hint =
    near === undefined
      ? `see ${Help.program} --help`
      : pointer === undefined
        ? `did you mean ${near}?`
        : `did you mean ${Help.program} ${pointer}?`
  return `unknown command ${given} (${hint})`
}

/** Why a choice or a whole number is refused, in the user's words, before the parser's wording. */
const checkValue = (flag: Spec.FlagDoc, given: string, help: string): string | undefined => {
  if (flag.choices !== undefined && !flag.choices.includes(given)) {
    const near = suggest(given, flag.choices)
    const hint = near === undefined ? `see ${help}` : `did you mean ${near}?`
    return `${flag.name}: ${JSON.stringify(given)} is not one of ${flag.choices.join(", ")} (${hint})`
  }
  if (flag.minimum !== undefined) {
    if (!/^-?\d+$/.test(given.trim()))
      return `${flag.name}: ${JSON.stringify(given)} is not a whole number, e.g. ${flag.example}`
    if (Number(given) < flag.minimum)
      return `${flag.name}: must be at least ${flag.minimum}, not ${given.trim()}`
  }
  return undefined
}

const isFlag = (token: string) => token.startsWith("-") && token !== "-" && !/^-\d/.test(token)

/**
 * Reads `argv` (without the node and script paths) against the commands.
 *
 * @since 0.2.0
 */
export const plan = (argv: ReadonlyArray<string>, docs: ReadonlyArray<Spec.CommandDoc>): Plan => {
  const [first, ...rest] = argv
  const names = docs.map((d) => d.name)
  const find = (name: string | undefined) => docs.find((d) => d.name === name)
  if (first === undefined || first === "--help" || first === "-h") return { _tag: "Help", command: undefined }
  if (first === "--version") return { _tag: "Version" }
  if (first === "help") {
    const topic = rest[0]
    if (topic === undefined) return { _tag: "Help", command: undefined }
    const doc = find(topic)
    return doc === undefined
      ? { _tag: "Refuse", message: unknownCommand(topic, names) }
      : { _tag: "Help", command: doc }
  }
  if (isFlag(first)) {
    // An option before the command: say where it belongs when a command has it.
    const name = first.split("=")[0] ?? first
    const has = (d: Spec.CommandDoc) => d.flags.some((f) => f.name === name)
    // The command named later on the line, if it has the option; else the first that does.
    const owner = docs.find((d) => rest.includes(d.name) && has(d)) ?? docs.find(has)
    return {
      _tag: "Refuse",
      message:
        owner === undefined
          ? unknown("option", name, ["--help", "--version"], `${Help.program} --help`)
          : `${name} goes after the command, e.g. ${Help.program} ${owner.name} ${name}`,
    }
  }
  const doc = find(first)
  if (doc === undefined) {
    return { _tag: "Refuse", message: unknownCommand(first, names) }
  }
  const help = `${Help.program} ${doc.name} --help`
  const flags = [...doc.flags, ...Help.builtIns]
  const candidates = flags.flatMap((f) => [f.name, ...f.aliases])
  const positionals: Array<string> = []
  for (let i = 0; i < rest.length; i++) {
    const token = rest[i] ?? ""
    if (token === "--") {
      positionals.push(...rest.slice(i + 1))
      break
    }
    if (!isFlag(token)) {
      positionals.push(token)
      continue
    }
    const [name = token, ...value] = token.split("=")
    if (name === "--help" || name === "-h") return { _tag: "Help", command: doc }
    const flag = flags.find((f) => f.name === name || f.aliases.includes(name))
    if (flag === undefined) return { _tag: "Refuse", message: unknown("option", name, candidates, help) }
    if (flag.placeholder === undefined) {
      if (value.length > 0) return { _tag: "Refuse", message: `${name} takes no value (see ${help})` }
      continue
    }
    if (value.length === 0 && i + 1 >= rest.length) {
      return { _tag: "Refuse", message: `${name} needs a value: ${flag.example}` }
    }
    const given = value.length > 0 ? value.join("=") : (rest[++i] ?? "")
    const refused = checkValue(flag, given, help)
    if (refused !== undefined) return { _tag: "Refuse", message: refused }
  }
  const repeated = doc.args.some((a) => a.repeated)
  const required = doc.args.filter((a) => !a.optional)
  if (!repeated && positionals.length > doc.args.length) {
    return {
      _tag: "Refuse",
      message: `${doc.name}: unexpected argument ${positionals[doc.args.length]} (see ${help})`,
    }
  }
  const missing = required[positionals.length]
  if (missing !== undefined) {
    const example = [Help.program, doc.name, ...doc.args.map((a) => a.example)].join(" ")
    return { _tag: "Refuse", message: `${doc.name}: missing ${missing.name}, e.g. ${example} (see ${help})` }
  }
  return { _tag: "Run", command: doc }
}
