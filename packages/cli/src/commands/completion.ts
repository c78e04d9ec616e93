/**
 * `mcp-handles completion <shell>`: prints a completion script for bash, zsh or fish.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Completion from "../Completion.js"
import * as Spec from "../Spec.js"

const shell = Spec.argChoice("shell", Completion.shells, {
  description: "the shell to complete in: bash, zsh or fish",
  example: "bash",
})

/**
 * The command, given the documentation of every command (its own included) to complete.
 *
 * @since 0.2.0
 * @category commands
 */
export const make = (docs: () => ReadonlyArray<Spec.CommandDoc>) =>
  Spec.command(
    "completion",
    {
      summary: "Print a shell completion script (bash, zsh or fish)",
      description: [
        "Prints a script that completes commands, each command's options, and the values of options that take one of a few values. Load it in your shell's startup file.",
      ],
      examples: [
        { command: "echo 'source <(mcp-handles completion bash)' >> ~/.bashrc", note: "bash" },
        {
          command: `mcp-handles completion zsh > "\${fpath[1]}/_mcp-handles"`,
          note: "zsh (then start a new shell)",
        },
        {
          command: "mcp-handles completion fish > ~/.config/fish/completions/mcp-handles.fish",
          note: "fish",
        },
      ],
    },
    { shell },
    (options) =>
      Effect.sync(() => process.stdout.write(Completion.script(options.shell, docs()))).pipe(Effect.asVoid),
  )
