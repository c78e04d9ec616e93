/**
 * What the CLI draws: colour only on a terminal and never with `NO_COLOR`, and the one live
 * status line on stderr. A prompt pauses the status line (it would overwrite the question), and
 * a log or outcome line is printed above it, so the two never tear each other apart.
 *
 * There is one stderr per process, so the status line is one object per process.
 *
 * @since 0.2.0
 */

/**
 * Whether escape sequences may be written to `stream`: a terminal, without `NO_COLOR` (any
 * value, per no-color.org) and not `TERM=dumb`.
 *
 * @since 0.2.0
 */
export const styled = (stream: NodeJS.WriteStream): boolean =>
  stream.isTTY === true && (process.env.NO_COLOR ?? "") === "" && process.env.TERM !== "dumb"

/**
 * stderr is a terminal: the status line is rewritten in place there, printed line by line
 * elsewhere. (Cursor movement is not colour: `NO_COLOR` keeps it, `TERM=dumb` does not.)
 *
 * @since 0.2.0
 */
export const liveStderr = (): boolean => process.stderr.isTTY === true && process.env.TERM !== "dumb"

/**
 * Bold, where it can be seen.
 *
 * @since 0.2.0
 */
export const bold = (text: string, stream: NodeJS.WriteStream = process.stdout): string =>
  styled(stream) ? `\x1b[1m${text}\x1b[22m` : text

/**
 * Dim, where it can be seen.
 *
 * @since 0.2.0
 */
export const dim = (text: string, stream: NodeJS.WriteStream = process.stdout): string =>
  styled(stream) ? `\x1b[2m${text}\x1b[22m` : text

/**
 * The live status line on stderr.
 *
 * @since 0.2.0
 * @category models
 */
export interface StatusLine {
  /** Shows `text` (on a terminal in place of the last one; elsewhere once per change). */
  readonly show: (text: string) => void
  /** Takes the line away (on a terminal); the next `show` draws it again. */
  readonly clear: () => void
  /** Prints a whole line on stderr above the status line (after the prompt, if one is open). */
  readonly print: (line: string) => void
  /** Runs `f` with the status line hidden and frozen (a prompt), then draws it again. */
  readonly paused: <A>(f: () => Promise<A>) => Promise<A>
}

const eraseLine = "\r\x1b[2K"

const make = (): StatusLine => {
  /** What is (or would be) on the line. */
  let current = ""
  /** What was last drawn or printed, to print a changed line only once off a terminal. */
  let drawn = ""
  let pauses = 0
  /** Lines printed while a prompt had the terminal: they would break into its question. */
  const held: Array<string> = []
  const fit = (text: string): string => {
    // A line wider than the terminal wraps, and `\r` then rewrites only its last row.
    const width = Math.max(20, (process.stderr.columns ?? 80) - 1)
    return text.length <= width ? text : `${text.slice(0, width - 1)}…`
  }
  const draw = () => {
    if (pauses > 0 || current === "") return
    if (liveStderr()) process.stderr.write(`${eraseLine}${fit(current)}`)
    else if (current !== drawn) process.stderr.write(`${current}\n`)
    drawn = current
  }
  const erase = () => {
    if (liveStderr() && drawn !== "") process.stderr.write(eraseLine)
  }
  return {
    show: (text) => {
      if (text === current && (pauses > 0 || !liveStderr())) return
      current = text
      draw()
    },
    clear: () => {
      erase()
      current = ""
      drawn = ""
    },
    print: (line) => {
      if (pauses > 0) {
        held.push(line)
        return
      }
      erase()
      process.stderr.write(`${line}\n`)
      if (liveStderr()) {
        drawn = ""
        draw()
      }
    },
    paused: async (f) => {
      if (pauses === 0) erase()
      pauses += 1
      try {
        return await f()
      } finally {
        pauses -= 1
        if (pauses === 0) for (const line of held.splice(0)) process.stderr.write(`${line}\n`)
        drawn = ""
        draw()
      }
    },
  }
}

/**
 * The status line of this process.
 *
 * @since 0.2.0
 */
export const status: StatusLine = make()
