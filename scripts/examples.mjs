/**
 * The examples of the READMEs and the docs/ guides: the fenced block right below each
 * `<!-- example: NAME; FLAGS -->` line (scripts/external-app.mjs says what the flags do), read
 * by the check that installs and runs them and by the docs tests, so that both read them alike.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

/** A marker or a block that is not as the rules say. */
export class ExampleError extends Error {}

export const marker = /^<!--\s*example:\s*([a-z0-9-]+)\s*(?:;\s*(.*?))?\s*-->\s*$/

/** README.md, the guides in docs/, then each package's README. */
export const readmes = () => [
  path.join(root, "README.md"),
  ...fs
    .readdirSync(path.join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => path.join(root, "docs", name)),
  ...fs
    .readdirSync(path.join(root, "packages"))
    .sort()
    .map((name) => path.join(root, "packages", name, "README.md"))
    .filter((file) => fs.existsSync(file)),
]

/** The examples of one Markdown file, in order. */
export const examplesOf = (file) => {
  const lines = fs.readFileSync(file, "utf8").split("\n")
  const found = []
  for (let i = 0; i < lines.length; i++) {
    const match = marker.exec(lines[i])
    if (match === null) continue
    const where = `${path.relative(root, file)}:${i + 1}`
    let start = i + 1
    while (start < lines.length && lines[start].trim() === "") start++
    const fence = /^```(ts|sh)\s*$/.exec(lines[start] ?? "")
    if (fence === null)
      throw new ExampleError(`${where}: the example marker is not followed by a ts or sh block`)
    const end = lines.findIndex((line, at) => at > start && line.trim() === "```")
    if (end === -1) throw new ExampleError(`${where}: the example's block is not closed`)
    const flags = (match[2] ?? "").split(";").map((flag) => flag.trim())
    const known = ["", "compile only", "needs DATABASE_URL", "nodenext only"]
    const valued = ["prints ", "file ", "run "]
    const unknown = flags.filter((flag) => !known.includes(flag) && !valued.some((v) => flag.startsWith(v)))
    if (unknown.length > 0) throw new ExampleError(`${where}: unknown example flag(s): ${unknown.join(", ")}`)
    const flagValue = (prefix) => flags.find((flag) => flag.startsWith(prefix))?.slice(prefix.length)
    const savedAs = flagValue("file ")
    const runBy = flagValue("run ")
    if ((savedAs === undefined) !== (runBy === undefined))
      throw new ExampleError(`${where}: an example is run by its text with both "file F" and "run COMMAND"`)
    if (runBy !== undefined) {
      // What the marker runs is what the text says: the file name and the command, in backticks,
      // in the paragraph before the block or right after it.
      const around = lines.slice(Math.max(0, i - 12), end + 6).join("\n")
      for (const said of [savedAs, runBy])
        if (!around.includes(`\`${said}\``) && !around.includes(`\n${said}`))
          throw new ExampleError(`${where}: the text around the example does not say \`${said}\``)
    }
    found.push({
      name: match[1],
      where,
      language: fence[1],
      source: `${lines.slice(start + 1, end).join("\n")}\n`,
      compileOnly: flags.includes("compile only"),
      needsDatabase: flags.includes("needs DATABASE_URL"),
      nodenextOnly: flags.includes("nodenext only"),
      prints: flags.filter((flag) => flag.startsWith("prints ")).map((flag) => flag.slice("prints ".length)),
      file: savedAs,
      runBy,
    })
    i = end
  }
  return found
}

/** Every example, each name once. */
export const collectExamples = () => {
  const all = readmes().flatMap(examplesOf)
  const seen = new Map()
  for (const example of all) {
    if (seen.has(example.name)) {
      throw new ExampleError(
        `${example.where}: example name ${example.name} is used at ${seen.get(example.name)} too`,
      )
    }
    seen.set(example.name, example.where)
  }
  return all
}
