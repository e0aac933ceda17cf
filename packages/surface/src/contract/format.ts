import { diffArrays, diffWords } from 'diff'
import type { Change, RenderingChange, SurfaceDiff, TokenDelta, ToolDiff } from './diff.ts'

/** How a diff is printed: for a terminal, for a pull-request comment, or for a program. */
export const DIFF_FORMATS = ['text', 'md', 'json'] as const
export type DiffFormat = (typeof DIFF_FORMATS)[number]

/** What the two sides are called in the output (a git ref, a package version, a file). */
export interface DiffLabels {
  before: string
  after: string
}

/** `[-removed-]{+added+}` word diff, git's plain word-diff notation. */
export function wordDiff(before: string, after: string): string {
  return diffWords(before, after)
    .map((part) => (part.added ? `{+${part.value}+}` : part.removed ? `[-${part.value}-]` : part.value))
    .join('')
}

const MARK = { added: '+', removed: '-', changed: '~' } as const
const json = (v: unknown) => JSON.stringify(v)
const signed = (n: number) => (n >= 0 ? `+${n}` : String(n))

function tokens(t: TokenDelta): string {
  if (t.before === null) return `${t.after ?? '?'}`
  if (t.after === null) return `${t.before}`
  return t.before === t.after ? `${t.after} (±0)` : `${t.before} → ${t.after} (${signed(t.after - t.before)})`
}

function changeText(c: Change): string {
  if (c.kind === 'changed') {
    const value = c.isProse ? wordDiff(String(c.before), String(c.after)) : `${json(c.before)} → ${json(c.after)}`
    return `${MARK[c.kind]} ${c.path}: ${value}`
  }
  return `${MARK[c.kind]} ${c.path}: ${c.isProse ? String(c.kind === 'added' ? c.after : c.before) : json(c.kind === 'added' ? c.after : c.before)}`
}

function summary(d: SurfaceDiff): string[] {
  const count = (status: ToolDiff['status']) => d.tools.filter((t) => t.status === status).length
  const parts = [`${count('changed')} tool(s) changed`, `${count('added')} added`, `${count('removed')} removed`]
  if (d.order !== null) parts.push('tool order changed')
  if (d.errors.length > 0) parts.push(`${d.errors.length} error-code change(s)`)
  if (d.prompt.length > 0) parts.push(`${d.prompt.length} prompt line(s) changed`)
  if (d.rendering.length > 0) parts.push(`${d.rendering.length} rendered example(s) changed`)
  return parts
}

const isKnown = (t: TokenDelta) => t.before !== null && t.after !== null
const isAny = (t: TokenDelta) => t.before !== null || t.after !== null

function totalLine(d: SurfaceDiff): string {
  const { tools, prompt, toolsNoCodeTool, promptNoCodeTool } = d.tokens
  const withCode = `tool tokens ${tokens(tools)}${isKnown(prompt) ? `; prompt prose ${tokens(prompt)}` : ''}`
  if (!isAny(toolsNoCodeTool)) return withCode
  return `${withCode}; without a code tool: tool tokens ${tokens(toolsNoCodeTool)}${isAny(promptNoCodeTool) ? `, prompt prose ${tokens(promptNoCodeTool)}` : ''}`
}

/** A tool's tokens, and its tokens without a code tool where those differ. */
function toolTokens(t: ToolDiff): string {
  const own = tokens(t.tokens)
  const v = t.tokensNoCodeTool
  const isSame = v.before === t.tokens.before && v.after === t.tokens.after
  return isSame || (v.before === null && v.after === null) ? own : `${own}, without a code tool ${tokens(v)}`
}

/** A rendered example's lines as a line diff: `- ` removed, `+ ` added, two spaces for a line both sides have. */
function renderedLines(r: RenderingChange): string[] {
  return diffArrays(r.before ?? [], r.after ?? []).flatMap((part) => part.value.map((l) => `${part.added ? '+' : part.removed ? '-' : ' '} ${l}`))
}

/** For a terminal: one line per change, `+`/`-`/`~`, prose as a word diff. */
function formatText(d: SurfaceDiff, labels: DiffLabels): string {
  const lines = [`hands contract: ${labels.before} → ${labels.after}`]
  if (!d.isChanged) {
    lines.push('no surface change', totalLine(d), ...d.notes.map((n) => `note: ${n}`))
    return lines.join('\n')
  }
  lines.push(summary(d).join(', '))
  for (const t of d.tools) {
    lines.push('', `${MARK[t.status]} tool ${t.name} · tokens ${toolTokens(t)}`, ...t.changes.map((c) => `    ${changeText(c)}`))
  }
  if (d.order !== null) lines.push('', `~ tool order: ${d.order.before.join(', ')} → ${d.order.after.join(', ')}`)
  if (d.errors.length > 0) lines.push('', '~ errors', ...d.errors.map((c) => `    ${changeText(c)}`))
  if (d.prompt.length > 0) lines.push('', '~ prompt prose', ...d.prompt.map((c) => `    ${changeText(c)}`))
  if (d.rendering.length > 0) {
    lines.push('', '~ rendering')
    for (const r of d.rendering) lines.push(`    ${MARK[r.kind]} ${r.tool} · ${r.example}`, ...renderedLines(r).map((l) => `        ${l}`))
  }
  lines.push('', totalLine(d), ...d.notes.map((n) => `note: ${n}`))
  return lines.join('\n')
}

/** A code span that survives backticks inside. */
function code(text: string): string {
  const fence = '`'.repeat(Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length)) + 1)
  const padded = text.startsWith('`') || text.endsWith('`') ? ` ${text} ` : text
  return `${fence}${padded}${fence}`
}

/** A fenced block indented under a list item. */
function fenced(lang: string, body: string[]): string[] {
  return ['', `  \`\`\`\`${lang}`, ...body.map((l) => `  ${l}`), '  ````']
}

/** A schema or other large value, folded so the comment stays readable. */
function folded(value: unknown): string[] {
  return ['', '  <details><summary>JSON</summary>', ...fenced('json', JSON.stringify(value, null, 2).split('\n')), '', '  </details>']
}

function changeMd(c: Change): string[] {
  const head = `- ${code(c.path)} ${c.kind}`
  const side = c.kind === 'added' ? c.after : c.before
  if (c.isProse) {
    const body = c.kind === 'changed' ? [`- ${String(c.before)}`, `+ ${String(c.after)}`] : [`${MARK[c.kind]} ${String(side)}`]
    return [`${head}:`, ...fenced('diff', body)]
  }
  if (c.kind === 'changed') {
    const before = json(c.before)
    const after = json(c.after)
    if (before.length + after.length <= 120) return [`${head}: ${code(before)} → ${code(after)}`]
    return [`${head}:`, ...fenced('diff', [`- ${before}`, `+ ${after}`])]
  }
  const value = json(side)
  return value.length <= 120 ? [`${head}: ${code(value)}`] : [`${head}:`, ...folded(side)]
}

/** For a pull-request comment: a summary table of tools and tokens, then each change. */
function formatMarkdown(d: SurfaceDiff, labels: DiffLabels): string {
  const lines = ['### hands contract diff', '', `${code(labels.before)} → ${code(labels.after)}`, '']
  if (!d.isChanged) {
    lines.push('**No surface change.**', '', totalLine(d), ...d.notes.map((n) => `\n> ${n}`))
    return lines.join('\n')
  }
  lines.push(`**${summary(d).join(', ')}**`, '')
  if (d.tools.length > 0) {
    lines.push('| tool | change | tokens |', '|---|---|---:|')
    for (const t of d.tools) lines.push(`| ${code(t.name)} | ${t.status} | ${toolTokens(t)} |`)
    lines.push(`| **all tools** | | **${tokens(d.tokens.tools)}** |`)
    if (isAny(d.tokens.toolsNoCodeTool)) lines.push(`| **all tools, without a code tool** | | **${tokens(d.tokens.toolsNoCodeTool)}** |`)
    lines.push('')
  }
  for (const t of d.tools) lines.push(`#### ${code(t.name)} ${t.status}`, '', ...t.changes.flatMap(changeMd), '')
  if (d.order !== null) lines.push('#### Tool order', '', `- ${d.order.before.map(code).join(', ')}`, `- → ${d.order.after.map(code).join(', ')}`, '')
  if (d.errors.length > 0) lines.push('#### Errors', '', ...d.errors.flatMap(changeMd), '')
  if (d.prompt.length > 0) lines.push('#### Prompt prose', '', ...d.prompt.flatMap(changeMd), '')
  if (d.rendering.length > 0) {
    lines.push('#### Rendering', '')
    for (const r of d.rendering) lines.push(`- ${code(`${r.tool} · ${r.example}`)} ${r.kind}:`, ...fenced('diff', renderedLines(r)), '')
  }
  lines.push(totalLine(d), ...d.notes.map((n) => `\n> ${n}`))
  return lines.join('\n')
}

/** Print a diff in one of the formats. */
export function formatDiff(diff: SurfaceDiff, format: DiffFormat, labels: DiffLabels): string {
  switch (format) {
    case 'text':
      return formatText(diff, labels)
    case 'md':
      return formatMarkdown(diff, labels)
    case 'json':
      return JSON.stringify({ before: labels.before, after: labels.after, ...diff }, null, 2)
    default: {
      const never: never = format
      throw new Error(`unknown diff format ${String(never)}; use one of ${DIFF_FORMATS.join(', ')}`)
    }
  }
}
