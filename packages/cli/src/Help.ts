/**
 * Help text, rendered from the command definitions (`Spec`): what each command does, every
 * option with what it does and an example, the exit codes and examples to copy. Headings are
 * bold only on a terminal without `NO_COLOR`; piped, the text is plain.
 *
 * @since 0.2.0
 */
import * as Screen from "./Screen.js"
import type * as Spec from "./Spec.js"

/**
 * The program's name, as users type it.
 *
 * @since 0.2.0
 * @category constants
 */
export const program = "mcp-handles"

/**
 * The options every command answers besides its own.
 *
 * @since 0.2.0
 * @category constants
 */
export const builtIns: ReadonlyArray<Spec.FlagDoc> = [
  {
    name: "--help",
    aliases: ["-h"],
    placeholder: undefined,
    choices: undefined,
    minimum: undefined,
    completeFiles: false,
    repeated: false,
    defaultText: undefined,
    description: "show this help",
    example: "--help",
  },
]

const width = (): number => Math.min(100, Math.max(60, (process.stdout.columns ?? 100) - 2))

/** Wraps `text` to the width, each line indented by `indent`. */
const wrap = (text: string, indent: number): string => {
  const max = Math.max(30, width() - indent)
  const lines: Array<string> = []
  let current = ""
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (current !== "" && current.length + 1 + word.length > max) {
      lines.push(current)
      current = word
    } else current = current === "" ? word : `${current} ${word}`
  }
  if (current !== "") lines.push(current)
  return lines.map((line) => `${" ".repeat(indent)}${line}`).join("\n")
}

const heading = (text: string) => Screen.bold(text)

/**
 * How an option is written in help: `--status open|terminal|in-doubt|all`.
 *
 * @since 0.2.0
 */
export const flagUsage = (flag: Spec.FlagDoc): string =>
  [[flag.name, ...flag.aliases].join(", "), flag.placeholder].filter((p) => p !== undefined).join(" ")

const argUsage = (arg: Spec.ArgDoc): string =>
  arg.repeated ? `[${arg.name}...]` : arg.optional ? `[${arg.name}]` : `<${arg.name}>`

/**
 * `mcp-handles call <SERVER-URL> <TOOL> [options]`.
 *
 * @since 0.2.0
 */
export const usageLine = (doc: Spec.CommandDoc): string =>
  [program, doc.name, ...doc.args.map(argUsage), doc.flags.length > 0 ? "[options]" : undefined]
    .filter((p) => p !== undefined)
    .join(" ")

const section = (title: string, body: ReadonlyArray<string>): string =>
  body.length === 0 ? "" : `${heading(title)}\n${body.join("\n")}\n`

const examples = (list: ReadonlyArray<Spec.Example>): ReadonlyArray<string> =>
  list.flatMap((e) => (e.note === undefined ? [`  $ ${e.command}`] : [`  # ${e.note}`, `  $ ${e.command}`]))

/**
 * The help of one command.
 *
 * @since 0.2.0
 */
export const command = (doc: Spec.CommandDoc): string => {
  const flag = (f: Spec.FlagDoc) => {
    const notes = [
      f.repeated ? "repeatable" : undefined,
      f.defaultText === undefined ? undefined : `default: ${f.defaultText}`,
    ]
      .filter((n) => n !== undefined)
      .join("; ")
    return [
      `  ${Screen.bold(flagUsage(f))}`,
      wrap(`${f.description}${notes === "" ? "" : ` (${notes})`}`, 6),
      `      e.g. ${f.example}`,
    ].join("\n")
  }
  const arg = (a: Spec.ArgDoc) =>
    [`  ${Screen.bold(a.name)}`, wrap(a.description, 6), `      e.g. ${a.example}`].join("\n")
  return [
    `${program} ${doc.name}: ${doc.summary}\n`,
    `${heading("Usage:")} ${usageLine(doc)}\n`,
    `${doc.description.map((p) => wrap(p, 0)).join("\n\n")}\n`,
    section("Arguments:", doc.args.map(arg)),
    section("Options:", [...doc.flags, ...builtIns].map(flag)),
    section(
      "Exit codes:",
      (doc.exitCodes ?? []).map(([code, meaning]) => `  ${String(code).padEnd(4)}${meaning}`),
    ),
    section("Examples:", examples(doc.examples)),
  ]
    .filter((part) => part !== "")
    .join("\n")
}

/**
 * The help of the program: its commands, the exit codes, the environment and examples.
 *
 * @since 0.2.0
 */
export const root = (docs: ReadonlyArray<Spec.CommandDoc>, version: string): string => {
  const nameWidth = Math.max(...docs.map((d) => d.name.length)) + 2
  return [
    `${program} ${version}: durable MCP task calls from the shell. Calls are written to a store before they leave, so a crash, a deploy or Ctrl-C never loses one; list, resume, cancel and clean them there.\n`,
    `${heading("Usage:")} ${program} <command> [options]\n`,
    section(
      "Commands:",
      docs.map((d) => `  ${Screen.bold(d.name.padEnd(nameWidth))}${d.summary}`),
    ),
    section("Options:", [
      `  ${Screen.bold("--help, -h")}  show help; ${program} <command> --help (or ${program} help <command>) for a command's options and examples`,
      `  ${Screen.bold("--version")}   print the version`,
    ]),
    section("Exit codes:", [
      "  0   success",
      "  1   the operation failed, or a followed call ended failed, cancelled, expired or with isError",
      "  2   bad input: usage, an unknown option, bad --args, an unknown key",
      "  3   a call does not rest yet and needs someone: in doubt, waiting for input, skipped",
      "  130 interrupted (Ctrl-C): open calls are handed off to the store, never cancelled",
    ]),
    section("Environment:", [
      "  MCP_HANDLES_STORE     the store when --store is not given",
      "  MCP_HANDLES_INSTANCE  the lease owner name when --instance is not given",
      "  MCP_HANDLES_SERVERS   a server list file of earlier versions, imported into the store once",
      "  NO_COLOR              no colour (output to a pipe never has any)",
    ]),
    section(
      "Examples:",
      examples([
        { command: `${program} demo`, note: "the crash-and-recover demo" },
        // A tool the fake server serves as shipped (npx fake-mcp-server --port 3000), so that the
        // example runs as printed.
        {
          command: `${program} call http://127.0.0.1:3000/mcp slow_compute --args '{"seconds":2,"label":"tides"}' --key tides-1`,
          note: "a call to the fake server (npx fake-mcp-server --port 3000)",
        },
        { command: `${program} list --stuck` },
        { command: `${program} resume` },
        { command: `source <(${program} completion bash)`, note: "shell completion" },
      ]),
    ),
  ]
    .filter((part) => part !== "")
    .join("\n")
}
