/**
 * BENCHMARKS.md assembly. The file is split into `## ` sections. Sections other packages own
 * (B1, B2, B6, anything unknown) are kept verbatim. Generated text sits between markers, so the
 * prose written around it (analysis, profiles) survives every run; a section that does not
 * exist yet is created.
 */

export const BEGIN = "<!-- pnpm bench: generated, begin -->"
export const END = "<!-- pnpm bench: generated, end -->"

export interface Section {
  /** The heading line without `## `, e.g. `B3` or `Summary`. */
  readonly heading: string
  /** Everything after the heading line, up to the next `## ` heading. */
  readonly body: string
}

export interface Document {
  readonly preamble: string
  readonly sections: ReadonlyArray<Section>
}

export const parse = (text: string): Document => {
  const lines = text.split("\n")
  const sections: Array<{ heading: string; lines: Array<string> }> = []
  const preamble: Array<string> = []
  let inFence = false
  for (const line of lines) {
    if (line.startsWith("```")) inFence = !inFence
    if (!inFence && line.startsWith("## ")) {
      sections.push({ heading: line.slice(3).trim(), lines: [] })
      continue
    }
    const current = sections[sections.length - 1]
    if (current === undefined) preamble.push(line)
    else current.lines.push(line)
  }
  return {
    preamble: preamble.join("\n"),
    sections: sections.map((s) => ({ heading: s.heading, body: s.lines.join("\n") })),
  }
}

export const render = (doc: Document): string =>
  `${[doc.preamble.trimEnd(), ...doc.sections.map((s) => `## ${s.heading}\n${s.body.replace(/\s+$/, "")}`)].join("\n\n")}\n`

/** The id of a section (`B3` for `B3` or `B3: reconcile at boot`). */
const idOf = (heading: string) => heading.split(/[\s:]/)[0] ?? heading

/**
 * Replaces the generated part of section `id` (between the markers) with `generated`, keeping
 * the rest of the section. A section without markers gets them at its start; a missing section
 * is created (at `order`'s position).
 */
export const upsertGenerated = (
  doc: Document,
  id: string,
  heading: string,
  generated: string,
  order: ReadonlyArray<string>,
): Document => {
  const block = `${BEGIN}\n\n${generated.trim()}\n\n${END}`
  const at = doc.sections.findIndex((s) => idOf(s.heading) === id)
  if (at >= 0) {
    const section = doc.sections[at] as Section
    const begin = section.body.indexOf(BEGIN)
    const end = section.body.indexOf(END)
    const body =
      begin >= 0 && end > begin
        ? `${section.body.slice(0, begin)}${block}${section.body.slice(end + END.length)}`
        : `\n${block}\n${section.body}`
    const sections = [...doc.sections]
    sections[at] = { heading: section.heading, body }
    return { ...doc, sections }
  }
  const rank = (h: string) => {
    const i = order.indexOf(idOf(h))
    return i < 0 ? order.length : i
  }
  const mine = rank(heading)
  const sections = [...doc.sections]
  let insertAt = sections.findIndex((s) => rank(s.heading) > mine)
  if (insertAt < 0) insertAt = sections.length
  sections.splice(insertAt, 0, { heading, body: `\n${block}\n` })
  return { ...doc, sections }
}

/** The generated part (between the markers) of section `id`, if it has one. */
export const generatedOf = (doc: Document, id: string): string | undefined => {
  const section = doc.sections.find((s) => idOf(s.heading) === id)
  if (section === undefined) return undefined
  const begin = section.body.indexOf(BEGIN)
  const end = section.body.indexOf(END)
  return begin >= 0 && end > begin ? section.body.slice(begin + BEGIN.length, end) : undefined
}
