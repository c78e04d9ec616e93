/**
 * The command line as data: every command, option and argument with what it does and an
 * example. @effect/cli parses the command line; help, shell completion and the check for
 * unknown commands and options are rendered here from the same definitions, so none of them can
 * drift from what the parser accepts.
 *
 * @since 0.2.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"

/**
 * What help and completion know about one option.
 *
 * @since 0.2.0
 * @category models
 */
export interface FlagDoc {
  /** With its dashes: `--store`. */
  readonly name: string
  readonly aliases: ReadonlyArray<string>
  /** What its value looks like (`STORE`); undefined for a switch that takes none. */
  readonly placeholder: string | undefined
  /** The values a choice accepts, offered by completion. */
  readonly choices: ReadonlyArray<string> | undefined
  /** For a whole number: the least value it accepts. */
  readonly minimum: number | undefined
  /** Paths complete as files. */
  readonly completeFiles: boolean
  readonly repeated: boolean
  /** The default, as the user would type it. */
  readonly defaultText: string | undefined
  readonly description: string
  /** One use of the option, as typed: `--store sqlite:./tasks.db`. */
  readonly example: string
}

/**
 * An option: the parser's definition and its documentation.
 *
 * @since 0.2.0
 * @category models
 */
export interface Flag<A> {
  readonly _tag: "Flag"
  readonly options: Options.Options<A>
  readonly doc: FlagDoc
}

/**
 * @since 0.2.0
 * @category models
 */
export interface ArgDoc {
  /** As shown in usage: `KEY`. */
  readonly name: string
  readonly description: string
  readonly example: string
  readonly optional: boolean
  readonly repeated: boolean
  /** The values it accepts, offered by completion. */
  readonly choices: ReadonlyArray<string> | undefined
}

/**
 * A positional argument: the parser's definition and its documentation.
 *
 * @since 0.2.0
 * @category models
 */
export interface Arg<A> {
  readonly _tag: "Arg"
  readonly args: Args.Args<A>
  readonly doc: ArgDoc
}

/**
 * @since 0.2.0
 * @category models
 */
export interface Example {
  /** Without the `$ `: `mcp-handles list --status open`. */
  readonly command: string
  readonly note?: string | undefined
}

/**
 * @since 0.2.0
 * @category models
 */
export interface CommandDoc {
  readonly name: string
  /** One line, for the list of commands. */
  readonly summary: string
  /** Paragraphs for the command's own help. */
  readonly description: ReadonlyArray<string>
  readonly examples: ReadonlyArray<Example>
  readonly flags: ReadonlyArray<FlagDoc>
  readonly args: ReadonlyArray<ArgDoc>
  /** What the exit status means for this command, when more than success and failure. */
  readonly exitCodes?: ReadonlyArray<readonly [code: number, meaning: string]> | undefined
}

interface FlagText {
  readonly description: string
  readonly example: string
}

const flag = <A>(options: Options.Options<A>, doc: FlagDoc): Flag<A> => ({
  _tag: "Flag",
  options: Options.withDescription(options, doc.description),
  doc,
})

const baseDoc = (name: string, text: FlagText): FlagDoc => ({
  name: `--${name}`,
  aliases: [],
  placeholder: undefined,
  choices: undefined,
  minimum: undefined,
  completeFiles: false,
  repeated: false,
  defaultText: undefined,
  description: text.description,
  example: text.example,
})

/**
 * A switch: present or not.
 *
 * @since 0.2.0
 * @category constructors
 */
export const boolean = (name: string, text: FlagText): Flag<boolean> =>
  flag(Options.boolean(name), baseDoc(name, text))

/**
 * An option with a text value.
 *
 * @since 0.2.0
 * @category constructors
 */
export const text = (
  name: string,
  text: FlagText & { readonly placeholder: string; readonly completeFiles?: boolean | undefined },
): Flag<string> =>
  flag(Options.text(name), {
    ...baseDoc(name, text),
    placeholder: text.placeholder,
    completeFiles: text.completeFiles ?? false,
  })

/**
 * An option with a whole number of at least `minimum`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const integer = (
  name: string,
  text: FlagText & { readonly placeholder: string; readonly minimum: number },
): Flag<number> =>
  flag(Options.integer(name), {
    ...baseDoc(name, text),
    placeholder: text.placeholder,
    minimum: text.minimum,
  })

/**
 * An option with one of a few values.
 *
 * @since 0.2.0
 * @category constructors
 */
export const choice = <const C extends ReadonlyArray<string>>(
  name: string,
  choices: C,
  text: FlagText,
): Flag<C[number]> =>
  flag(Options.choice(name, choices), { ...baseDoc(name, text), placeholder: choices.join("|"), choices })

/**
 * @since 0.2.0
 * @category combinators
 */
export const optional = <A>(self: Flag<A>): Flag<Option.Option<A>> => ({
  _tag: "Flag",
  options: Options.optional(self.options),
  doc: self.doc,
})

/**
 * @since 0.2.0
 * @category combinators
 */
export const withDefault = <A>(self: Flag<A>, value: A, shown: string): Flag<A> => ({
  _tag: "Flag",
  options: Options.withDefault(self.options, value),
  doc: { ...self.doc, defaultText: shown },
})

/**
 * Given any number of times (zero included).
 *
 * @since 0.2.0
 * @category combinators
 */
export const repeated = <A>(self: Flag<A>): Flag<Array<A>> => ({
  _tag: "Flag",
  options: Options.repeated(self.options),
  doc: { ...self.doc, repeated: true },
})

const positional = <A>(
  args: Args.Args<A>,
  name: string,
  text: FlagText,
  choices?: ReadonlyArray<string>,
): Arg<A> => ({
  _tag: "Arg",
  args: Args.withDescription(args, text.description),
  doc: {
    name: name.toUpperCase(),
    description: text.description,
    example: text.example,
    optional: false,
    repeated: false,
    choices,
  },
})

/**
 * A positional argument with a text value.
 *
 * @since 0.2.0
 * @category constructors
 */
export const arg = (name: string, text: FlagText): Arg<string> => positional(Args.text({ name }), name, text)

/**
 * A positional argument with one of a few values.
 *
 * @since 0.2.0
 * @category constructors
 */
export const argChoice = <const C extends ReadonlyArray<string>>(
  name: string,
  choices: C,
  text: FlagText,
): Arg<C[number]> =>
  positional(
    Args.choice(
      choices.map((c) => [c, c] as const),
      { name },
    ),
    name,
    text,
    choices,
  )

/**
 * A positional argument given any number of times (zero included).
 *
 * @since 0.2.0
 * @category combinators
 */
export const repeatedArg = <A>(self: Arg<A>): Arg<Array<A>> => ({
  _tag: "Arg",
  args: Args.repeated(self.args),
  doc: { ...self.doc, optional: true, repeated: true },
})

/**
 * @since 0.2.0
 * @category models
 */
export type Params = Readonly<Record<string, Flag<unknown> | Arg<unknown>>>

/**
 * The values a handler receives for its parameters.
 *
 * @since 0.2.0
 * @category models
 */
export type Values<P extends Params> = {
  readonly [K in keyof P]: P[K] extends Flag<infer A> ? A : P[K] extends Arg<infer A> ? A : never
}

/**
 * What the parser hands a command's handler: each parameter's value under its key.
 *
 * @since 0.2.0
 * @category models
 */
export type Parsed = { readonly [key: string]: unknown }

/**
 * A command and its documentation.
 *
 * @since 0.2.0
 * @category models
 */
export interface Spec<Name extends string, E, R> {
  readonly command: Command.Command<Name, R, E, Parsed>
  readonly doc: CommandDoc
}

/**
 * @since 0.2.0
 * @category models
 */
export interface CommandText {
  readonly summary: string
  readonly description: ReadonlyArray<string>
  readonly examples: ReadonlyArray<Example>
  readonly exitCodes?: ReadonlyArray<readonly [code: number, meaning: string]> | undefined
}

/**
 * A command whose options and arguments are documented where they are defined.
 *
 * @since 0.2.0
 * @category constructors
 */
export const command = <const Name extends string, const P extends Params, E, R>(
  name: Name,
  text: CommandText,
  params: P,
  handler: (values: Values<P>) => Effect.Effect<void, E, R>,
): Spec<Name, E, R> => {
  const config = {} as Record<string, Options.Options<unknown> | Args.Args<unknown>>
  const flags: Array<FlagDoc> = []
  const args: Array<ArgDoc> = []
  for (const [key, param] of Object.entries(params)) {
    if (param._tag === "Flag") {
      config[key] = param.options
      flags.push(param.doc)
    } else {
      config[key] = param.args
      args.push(param.doc)
    }
  }
  // The parser hands each parameter's value back under its key: exactly `Values<P>`, which
  // TypeScript cannot follow through Object.entries, hence the one assertion.
  const parsed: Command.Command<Name, R, E, Parsed> = Command.make(name, config, (values) =>
    handler(values as unknown as Values<P>),
  )
  return { command: parsed.pipe(Command.withDescription(text.summary)), doc: { name, ...text, flags, args } }
}
