/**
 * Shell completion scripts for bash, zsh and fish, generated from the command definitions: the
 * commands, each command's own options (with a short description where the shell shows one),
 * the values of choices, and files where an option takes a path.
 *
 * @since 0.2.0
 */
import * as Help from "./Help.js"
import type * as Spec from "./Spec.js"

/**
 * @since 0.2.0
 * @category models
 */
export type Shell = "bash" | "zsh" | "fish"

/**
 * @since 0.2.0
 * @category constants
 */
export const shells: ReadonlyArray<Shell> = ["bash", "zsh", "fish"]

/** A description short enough for a completion menu: its first clause. */
const short = (text: string): string => {
  const clause = text.split(/[;:(]| - /)[0]?.trim() ?? text
  return clause.length <= 70 ? clause : `${clause.slice(0, 69)}…`
}

const flagsOf = (doc: Spec.CommandDoc): ReadonlyArray<Spec.FlagDoc> => [...doc.flags, ...Help.builtIns]

const fn = "_mcp_handles"

const bash = (docs: ReadonlyArray<Spec.CommandDoc>): string => {
  const commands = [...docs.map((d) => d.name), "help"].join(" ")
  const cases = docs.map((doc) => {
    const values = flagsOf(doc)
      .filter((f) => f.placeholder !== undefined)
      .map((f) => {
        const names = [f.name, ...f.aliases].join("|")
        const reply =
          f.choices !== undefined
            ? `COMPREPLY=($(compgen -W "${f.choices.join(" ")}" -- "$cur"))`
            : f.completeFiles
              ? `COMPREPLY=($(compgen -f -- "$cur"))`
              : "COMPREPLY=()"
        return `        ${names}) ${reply}; return ;;`
      })
    const words = flagsOf(doc)
      .flatMap((f) => [f.name, ...f.aliases])
      .join(" ")
    const positional = doc.args.find((a) => a.choices !== undefined)?.choices
    return [
      `    ${doc.name})`,
      ...(values.length > 0 ? ['      case "$prev" in', ...values, "      esac"] : []),
      positional === undefined
        ? `      COMPREPLY=($(compgen -W "${words}" -- "$cur"))`
        : `      if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "${words}" -- "$cur")); else COMPREPLY=($(compgen -W "${positional.join(" ")}" -- "$cur")); fi`,
      "      ;;",
    ].join("\n")
  })
  return `# ${Help.program} completion for bash.
# Install: echo 'source <(${Help.program} completion bash)' >> ~/.bashrc
${fn}() {
  local cur prev cmd i
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  cmd=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "\${COMP_WORDS[i]}" in
      -*) ;;
      *) cmd="\${COMP_WORDS[i]}"; break ;;
    esac
  done
  case "$cmd" in
    "")
      COMPREPLY=($(compgen -W "${commands} --help --version" -- "$cur"))
      ;;
    help)
      COMPREPLY=($(compgen -W "${docs.map((d) => d.name).join(" ")}" -- "$cur"))
      ;;
${cases.join("\n")}
  esac
}
complete -o default -F ${fn} ${Help.program}
`
}

/** Inside a single-quoted zsh word, in an `_arguments` description. */
const zshText = (text: string): string =>
  short(text).replaceAll("'", "'\\''").replaceAll("[", "\\[").replaceAll("]", "\\]").replaceAll(":", "\\:")

const zsh = (docs: ReadonlyArray<Spec.CommandDoc>): string => {
  const commands = docs.map((d) => `    '${d.name}:${zshText(d.summary)}'`).join("\n")
  const cases = docs.map((doc) => {
    const specs = flagsOf(doc).flatMap((f) => {
      const names = [f.name, ...f.aliases]
      const repeat = f.repeated ? "*" : ""
      const value =
        f.placeholder === undefined
          ? ""
          : f.choices !== undefined
            ? `:${f.name.slice(2)}:(${f.choices.join(" ")})`
            : `:${f.name.slice(2)}:${f.completeFiles ? "_files" : " "}`
      const equals = f.placeholder === undefined ? "" : "="
      return names.map((name) => `'${repeat}${name}${equals}[${zshText(f.description)}]${value}'`)
    })
    const args = doc.args.map((a, i) => {
      const values = a.choices !== undefined ? `(${a.choices.join(" ")})` : " "
      return a.repeated
        ? `'*:${a.name.toLowerCase()}:${values}'`
        : `'${i + 1}:${a.name.toLowerCase()}:${values}'`
    })
    return [
      `    ${doc.name})`,
      `      _arguments -s \\`,
      ...[...specs, ...args].map((s) => `        ${s} \\`),
      "        && ret=0",
      "      ;;",
    ].join("\n")
  })
  return `#compdef ${Help.program}
# ${Help.program} completion for zsh.
# Install: ${Help.program} completion zsh > "\${fpath[1]}/_${Help.program}" (then start a new shell),
# or: echo 'source <(${Help.program} completion zsh)' >> ~/.zshrc (after compinit).
${fn}() {
  local curcontext="$curcontext" state line ret=1
  local -a commands
  commands=(
${commands}
    'help:show the help of a command'
  )
  _arguments -C \\
    '(- *)'{-h,--help}'[show help]' \\
    '(- *)--version[print the version]' \\
    '1: :->command' \\
    '*:: :->args' && ret=0
  case $state in
    command)
      _describe -t commands '${Help.program} command' commands && ret=0
      ;;
    args)
      curcontext="\${curcontext%:*:*}:${Help.program}-$words[1]:"
      case $words[1] in
        help)
          _describe -t commands '${Help.program} command' commands && ret=0
          ;;
${cases.join("\n")}
      esac
      ;;
  esac
  return ret
}
if [[ "$funcstack[1]" = "${fn}" ]]; then
  ${fn} "$@"
else
  compdef ${fn} ${Help.program}
fi
`
}

/** Inside a single-quoted fish word. */
const fishText = (text: string): string => short(text).replaceAll("\\", "\\\\").replaceAll("'", "\\'")

const fish = (docs: ReadonlyArray<Spec.CommandDoc>): string => {
  const c = `complete -c ${Help.program}`
  const lines = [
    `# ${Help.program} completion for fish.`,
    `# Install: ${Help.program} completion fish > ~/.config/fish/completions/${Help.program}.fish`,
    `${c} -f`,
    `${c} -n __fish_use_subcommand -s h -l help -d 'show help'`,
    `${c} -n __fish_use_subcommand -l version -d 'print the version'`,
    ...docs.map((d) => `${c} -n __fish_use_subcommand -a ${d.name} -d '${fishText(d.summary)}'`),
    `${c} -n __fish_use_subcommand -a help -d 'show the help of a command'`,
    `${c} -n '__fish_seen_subcommand_from help' -a '${docs.map((d) => d.name).join(" ")}'`,
  ]
  for (const doc of docs) {
    const when = `-n '__fish_seen_subcommand_from ${doc.name}'`
    for (const f of flagsOf(doc)) {
      const names = [
        `-l ${f.name.slice(2)}`,
        ...f.aliases.filter((a) => /^-[^-]$/.test(a)).map((a) => `-s ${a.slice(1)}`),
      ].join(" ")
      const value =
        f.placeholder === undefined
          ? ""
          : f.choices !== undefined
            ? ` -x -a '${f.choices.join(" ")}'`
            : f.completeFiles
              ? " -r -F"
              : " -x"
      lines.push(`${c} ${when} ${names}${value} -d '${fishText(f.description)}'`)
    }
    for (const a of doc.args) {
      if (a.choices !== undefined) lines.push(`${c} ${when} -x -a '${a.choices.join(" ")}'`)
    }
  }
  return `${lines.join("\n")}\n`
}

/**
 * The completion script for `shell`.
 *
 * @since 0.2.0
 */
export const script = (shell: Shell, docs: ReadonlyArray<Spec.CommandDoc>): string => {
  switch (shell) {
    case "bash":
      return bash(docs)
    case "zsh":
      return zsh(docs)
    case "fish":
      return fish(docs)
  }
}
