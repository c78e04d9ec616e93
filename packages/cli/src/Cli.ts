/**
 * The `mcp-handles` command line: the commands, and how a run ends (one line per failure, an
 * exit code, a stack only with `--verbose`). Help, the version and usage mistakes are answered
 * from the command definitions before @effect/cli parses (see `Argv`); the parser then turns the
 * command line into each command's options.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Argv from "./Argv.js"
import { CliError, exitCodes } from "./CliError.js"
import * as Common from "./Common.js"
import * as Call from "./commands/call.js"
import * as Completion from "./commands/completion.js"
import * as Decide from "./commands/decide.js"
import * as Demo from "./commands/demo.js"
import * as Gc from "./commands/gc.js"
import * as List from "./commands/list.js"
import * as Rekey from "./commands/rekey.js"
import * as Resume from "./commands/resume.js"
import * as Servers from "./commands/servers.js"
import * as Show from "./commands/show.js"
import * as Tools from "./commands/tools.js"
import * as Ui from "./commands/ui.js"
import * as Help from "./Help.js"
import * as Log from "./Log.js"
import * as Render from "./Render.js"
import type * as Spec from "./Spec.js"

/**
 * @since 0.1.0
 * @category constants
 */
export const version = "0.1.0"

const completion = Completion.make(() => docs)

/**
 * Every command's documentation, in the order help lists them.
 *
 * @since 0.2.0
 * @category constants
 */
export const docs: ReadonlyArray<Spec.CommandDoc> = [
  Demo.spec.doc,
  Call.spec.doc,
  Resume.spec.doc,
  List.spec.doc,
  Show.spec.doc,
  Decide.cancel.doc,
  Decide.reissue.doc,
  Decide.abandon.doc,
  Gc.spec.doc,
  Rekey.spec.doc,
  Servers.spec.doc,
  Tools.spec.doc,
  Ui.spec.doc,
  completion.doc,
]

/**
 * @since 0.1.0
 * @category commands
 */
export const root = Command.make(Help.program).pipe(
  Command.withSubcommands([
    Demo.spec.command,
    Call.spec.command,
    Resume.spec.command,
    List.spec.command,
    Show.spec.command,
    Decide.cancel.command,
    Decide.reissue.command,
    Decide.abandon.command,
    Gc.spec.command,
    Rekey.spec.command,
    Servers.spec.command,
    Tools.spec.command,
    Ui.spec.command,
    completion.command,
  ]),
)

const cli = Command.run(root, { name: Help.program, version })

/** The parser prints its own complaints with help attached; the CLI says it in one line instead. */
const quietParser = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Console.consoleWith((console) => Effect.withConsole(effect, { ...console, error: () => Effect.void }))

const plain = (doc: HelpDoc.HelpDoc): string =>
  HelpDoc.toAnsiText(doc)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: removing the escape sequences it wrote
    .replace(/\x1b\[[0-9;]*m/g, "")
    .replace(/\s+/g, " ")
    .trim()

const say = (stream: NodeJS.WriteStream, text: string) =>
  Effect.sync(() => {
    stream.write(text.endsWith("\n") ? text : `${text}\n`)
  })

/**
 * Runs the CLI on `argv` (without the node and script paths) and resolves to the exit code.
 *
 * @since 0.1.0
 */
export const run = (argv: ReadonlyArray<string>): Effect.Effect<number> => {
  const verbose = argv.includes("--verbose")
  const plan = Argv.plan(argv, docs)
  switch (plan._tag) {
    case "Help":
      return say(
        process.stdout,
        plan.command === undefined ? Help.root(docs, version) : Help.command(plan.command),
      ).pipe(Effect.as(exitCodes.ok))
    case "Version":
      return say(process.stdout, version).pipe(Effect.as(exitCodes.ok))
    case "Refuse":
      return say(process.stderr, `${Help.program}: ${plan.message}`).pipe(Effect.as(exitCodes.usage))
    case "Run":
      break
  }
  // Whatever a command prints, on either stream, goes through the redaction (see `Render.guard`).
  Render.guard(process.stdout, argv.includes("--reveal"))
  Render.guard(process.stderr, argv.includes("--reveal"))
  const command = plan.command.name
  return Effect.gen(function* () {
    yield* quietParser(cli(["node", Help.program, ...argv]))
    return yield* FiberRef.get(Common.exitCode)
  }).pipe(
    Effect.provide(NodeContext.layer),
    Effect.provide(Log.layer(verbose)),
    Effect.catchAllCause((cause) => {
      const failure = Cause.failureOption(cause)
      const [line, code] = Option.match(failure, {
        onNone: () => {
          const squashed = Cause.squash(cause)
          return [
            `unexpected error: ${squashed instanceof Error ? squashed.message : String(squashed)}`,
            1,
          ] as const
        },
        onSome: (error) =>
          error instanceof CliError
            ? ([error.message, error.exitCode] as const)
            : ValidationError.isValidationError(error)
              ? ([
                  `${command}: ${plain(error.error)} (see ${Help.program} ${command} --help)`,
                  exitCodes.usage,
                ] as const)
              : ([`unexpected error: ${String(error)}`, exitCodes.failed] as const),
      })
      return Effect.zipRight(
        say(process.stderr, `${Help.program}: ${line}${verbose ? `\n${Cause.pretty(cause)}` : ""}`),
        Effect.succeed(code),
      )
    }),
  )
}
