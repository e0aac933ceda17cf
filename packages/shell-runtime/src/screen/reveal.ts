/**
 * Characters that change how text reads without being seen: bidirectional controls (which can
 * make `exe.txt` display as `txt.exe` or reorder a command), zero-width spaces and joiners, the
 * byte-order mark, invisible operators, Unicode tag characters (invisible ASCII a model still
 * reads) and the line and paragraph separators (a line break some renderers draw).
 */
const INVISIBLE = /[\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]|\udb40[\udc00-\udc7f]/g

/** `text` with every such character written out as `<U+XXXX>`, and whether there was one. */
export function revealInvisible(text: string): { text: string; isRevealed: boolean } {
  let isRevealed = false
  const out = text.replace(INVISIBLE, (c) => {
    isRevealed = true
    return `<U+${(c.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}>`
  })
  return { text: out, isRevealed }
}
