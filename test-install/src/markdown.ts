import GithubSlugger from 'github-slugger'
import { Lexer, type Token, type Tokens } from 'marked'

/** A link of a Markdown page: where it points, split into the path and the `#fragment` (either may be empty). */
export interface MarkdownLink {
  href: string
  path: string
  fragment: string
}

/** Plain text of inline tokens, as a heading reads once rendered (code spans without their backticks). */
function plain(tokens: readonly Token[]): string {
  return tokens.map((t) => ('tokens' in t && t.tokens !== undefined ? plain(t.tokens) : 'text' in t ? String(t.text) : '')).join('')
}

function walk(tokens: readonly Token[], visit: (t: Token) => void): void {
  for (const t of tokens) {
    visit(t)
    if ('tokens' in t && t.tokens !== undefined) walk(t.tokens, visit)
    if (t.type === 'list') for (const item of (t as Tokens.List).items) walk(item.tokens, visit)
    if (t.type === 'table') {
      const table = t as Tokens.Table
      for (const cell of [...table.header, ...table.rows.flat()]) walk(cell.tokens, visit)
    }
  }
}

/** The links of a page (links and images; web and mail links included) and the anchors its headings get on GitHub and npm. */
export function readMarkdown(text: string): { links: MarkdownLink[]; anchors: Set<string> } {
  const tokens = new Lexer().lex(text)
  const links: MarkdownLink[] = []
  const slugger = new GithubSlugger()
  const anchors = new Set<string>()
  walk(tokens, (t) => {
    if (t.type === 'link' || t.type === 'image') {
      const href = (t as Tokens.Link).href
      const at = href.indexOf('#')
      links.push({ href, path: at < 0 ? href : href.slice(0, at), fragment: at < 0 ? '' : href.slice(at + 1) })
    }
    if (t.type === 'heading') anchors.add(slugger.slug(plain((t as Tokens.Heading).tokens)))
  })
  return { links, anchors }
}
