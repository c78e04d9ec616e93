/**
 * What the chaos programs print is their output, not logging: the report (or a child's JSON
 * milestones) on stdout, usage errors and failures on stderr.
 */
export const say = (line: string): void => void process.stdout.write(`${line}\n`)

export const complain = (line: string): void => void process.stderr.write(`${line}\n`)
