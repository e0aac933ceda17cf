import type { PromptProse } from '@hands/contracts'
import { textCost, toolCost } from '../adapters/token-cost.ts'
import type { Json, Surface, SurfaceTool } from './surface.ts'

/** One thing a model or a client would see differently. */
export interface Change {
  /** Where: `description`, `input commands.maxItems`, `result commands[].exit`, `annotations.readOnlyHint`, `not_found.summary`, `shell on: executionLine`. */
  path: string
  kind: 'added' | 'removed' | 'changed'
  /** The JSON value before; absent when added. */
  before?: unknown
  /** The JSON value after; absent when removed. */
  after?: unknown
  /** Prose a model reads (descriptions, titles, summaries, prompt lines), shown as a word diff. */
  isProse: boolean
}

/** Token counts before and after; null where that side has no such thing. */
export interface TokenDelta {
  before: number | null
  after: number | null
}

export interface ToolDiff {
  name: string
  status: 'added' | 'removed' | 'changed'
  changes: Change[]
  /** What the model pays for the tool on every request (name + description + input schema, o200k_base). */
  tokens: TokenDelta
}

/** Everything that differs between two surfaces, in surface order. */
export interface SurfaceDiff {
  tools: ToolDiff[]
  /** The order of the tools both sides have, when it differs. */
  order: { before: string[]; after: string[] } | null
  errors: Change[]
  prompt: Change[]
  /** What could not be compared (an older surface file without prompt prose or effects). */
  notes: string[]
  tokens: { tools: TokenDelta; prompt: TokenDelta }
  /** True when anything above differs; `--exit-code` fails on it. */
  isChanged: boolean
}

type Segment = string | number

const PROSE_KEYS = new Set(['description', 'title', 'summary'])
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v)
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** `commands[].minLength` for the segments `properties, commands, items, minLength` of a JSON Schema. */
function schemaPath(segments: readonly Segment[]): string {
  let out = ''
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]
    const next = segments[i + 1]
    if (s === 'properties' && next !== undefined) {
      out += `${out ? '.' : ''}${String(next)}`
      i++
    } else if (s === 'items') out += '[]'
    else if (typeof s === 'number') out += `[${s}]`
    else out += `${out ? '.' : ''}${s}`
  }
  return out
}

const dotPath = (segments: readonly Segment[]) =>
  segments
    .map((s) => (typeof s === 'number' ? `[${s}]` : s))
    .join('.')
    .replace(/\.\[/g, '[')

/** Every keyword that differs between two JSON values, recursively; `name` renders a path. */
function diffValue(a: unknown, b: unknown, at: Segment[], name: (segments: Segment[]) => string, out: Change[]): void {
  if (same(a, b)) return
  const last = at[at.length - 1]
  const isProse = typeof last === 'string' && PROSE_KEYS.has(last) && typeof a === 'string' && typeof b === 'string'
  if (isObject(a) && isObject(b)) {
    const keys = [...Object.keys(a), ...Object.keys(b).filter((k) => !Object.hasOwn(a, k))]
    for (const k of keys) {
      if (!Object.hasOwn(b, k)) out.push({ path: name([...at, k]), kind: 'removed', before: a[k], isProse: false })
      else if (!Object.hasOwn(a, k)) out.push({ path: name([...at, k]), kind: 'added', after: b[k], isProse: false })
      else diffValue(a[k], b[k], [...at, k], name, out)
    }
    // Property order is what the model reads first; a reorder with the same keys is still a change.
    const ak = Object.keys(a)
    const bk = Object.keys(b)
    if (last === 'properties' && ak.length === bk.length && ak.every((k) => Object.hasOwn(b, k)) && !same(ak, bk)) {
      out.push({ path: `${name(at)} order`, kind: 'changed', before: ak, after: bk, isProse: false })
    }
    return
  }
  const hasStructure = (v: unknown) => Array.isArray(v) && v.some((e) => e !== null && typeof e === 'object')
  if (Array.isArray(a) && Array.isArray(b) && (hasStructure(a) || hasStructure(b))) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      if (i >= b.length) out.push({ path: name([...at, i]), kind: 'removed', before: a[i], isProse: false })
      else if (i >= a.length) out.push({ path: name([...at, i]), kind: 'added', after: b[i], isProse: false })
      else diffValue(a[i], b[i], [...at, i], name, out)
    }
    return
  }
  out.push({ path: name(at), kind: 'changed', before: a, after: b, isProse })
}

const inSchema = (prefix: string) => (segments: Segment[]) => `${prefix} ${schemaPath(segments)}`.trimEnd()

const toolTokens = (t: SurfaceTool | undefined) => (t === undefined ? null : toolCost(t).tokens)

/** The fields of a tool as the diff shows them, in the order a reviewer reads them. */
function toolFields(t: SurfaceTool): Array<[string, unknown]> {
  return [
    ['title', t.title],
    ['description', t.description],
    ['call', t.call],
    ['effect', t.effect],
    ['toggle', t.toggle],
    ['annotations', t.annotations],
    ['input', t.input_schema],
    ['result', t.result_schema],
  ]
}

function diffTool(a: SurfaceTool, b: SurfaceTool): Change[] {
  const out: Change[] = []
  for (const key of ['title', 'description'] as const) {
    if (a[key] !== b[key]) out.push({ path: key, kind: 'changed', before: a[key], after: b[key], isProse: true })
  }
  if (!same(a.call, b.call)) out.push({ path: 'call', kind: 'changed', before: a.call, after: b.call, isProse: false })
  // Older surface files record no effect; their annotations are still compared.
  if (a.effect !== undefined && b.effect !== undefined && a.effect !== b.effect)
    out.push({ path: 'effect', kind: 'changed', before: a.effect, after: b.effect, isProse: false })
  if (a.toggle !== b.toggle) out.push({ path: 'toggle', kind: 'changed', before: a.toggle, after: b.toggle, isProse: false })
  diffValue(a.annotations, b.annotations, ['annotations'], dotPath, out)
  diffValue(a.input_schema, b.input_schema, [], inSchema('input'), out)
  diffValue(a.result_schema, b.result_schema, [], inSchema('result'), out)
  return out
}

function diffTools(a: Surface, b: Surface): ToolDiff[] {
  const before = new Map(a.tools.map((t) => [t.name, t]))
  const after = new Map(b.tools.map((t) => [t.name, t]))
  const out: ToolDiff[] = []
  for (const t of b.tools) {
    const o = before.get(t.name)
    if (o === undefined) {
      const changes = toolFields(t).map(([path, value]): Change => ({ path, kind: 'added', after: value, isProse: PROSE_KEYS.has(path) }))
      out.push({ name: t.name, status: 'added', changes, tokens: { before: null, after: toolTokens(t) } })
      continue
    }
    const changes = diffTool(o, t)
    if (changes.length > 0) out.push({ name: t.name, status: 'changed', changes, tokens: { before: toolTokens(o), after: toolTokens(t) } })
  }
  for (const o of a.tools) {
    if (after.has(o.name)) continue
    const changes = toolFields(o).map(([path, value]): Change => ({ path, kind: 'removed', before: value, isProse: PROSE_KEYS.has(path) }))
    out.push({ name: o.name, status: 'removed', changes, tokens: { before: toolTokens(o), after: null } })
  }
  return out
}

function diffErrors(a: Surface, b: Surface): Change[] {
  const out: Change[] = []
  const before = new Map(a.errors.codes.map((c) => [c.code, c]))
  const after = new Map(b.errors.codes.map((c) => [c.code, c]))
  const fields = ({ code: _, ...rest }: Surface['errors']['codes'][number]) => rest
  for (const c of b.errors.codes) {
    const o = before.get(c.code)
    if (o === undefined) out.push({ path: c.code, kind: 'added', after: fields(c), isProse: false })
    else diffValue(fields(o), fields(c), [c.code], dotPath, out)
  }
  for (const o of a.errors.codes) if (!after.has(o.code)) out.push({ path: o.code, kind: 'removed', before: fields(o), isProse: false })
  diffValue(a.errors.envelope, b.errors.envelope, [], inSchema('envelope'), out)
  return out
}

const VARIANTS = [
  ['shell_on', 'shell on'],
  ['shell_off', 'shell off'],
] as const

function diffPrompt(a: Surface, b: Surface, notes: string[]): Change[] {
  if (a.prompt === undefined || b.prompt === undefined) {
    if (a.prompt === b.prompt) return []
    notes.push(`the ${a.prompt === undefined ? 'old' : 'new'} surface records no prompt prose; prompt not compared`)
    return []
  }
  const out: Change[] = []
  for (const [key, label] of VARIANTS) {
    const pa = (a.prompt[key] ?? {}) as Partial<PromptProse>
    const pb = (b.prompt[key] ?? {}) as Partial<PromptProse>
    for (const line of [...new Set([...Object.keys(pa), ...Object.keys(pb)])] as Array<keyof PromptProse>) {
      const before = pa[line] ?? null
      const after = pb[line] ?? null
      if (before === after) continue
      const path = `${label}: ${line}`
      if (before === null) out.push({ path, kind: 'added', after, isProse: true })
      else if (after === null) out.push({ path, kind: 'removed', before, isProse: true })
      else out.push({ path, kind: 'changed', before, after, isProse: true })
    }
  }
  return out
}

/** What the model pays for the prompt prose with the shell tools on (as generated/budget.json counts it). */
function promptTokens(s: Surface): number | null {
  const p = s.prompt?.shell_on
  if (p === undefined) return null
  const text = [p.executionLine, p.inspectLine, p.batchLine, p.codeToolParagraph].filter((l): l is string => l !== null).join('\n')
  return textCost(text).tokens
}

/** Compare two surfaces: every change per tool, in the error codes and in the prompt prose, with token deltas. */
export function diffSurfaces(before: Surface, after: Surface): SurfaceDiff {
  const notes: string[] = []
  const tools = diffTools(before, after)
  for (const [side, s] of [
    ['old', before],
    ['new', after],
  ] as const) {
    if (s.tools.some((t) => t.effect === undefined)) notes.push(`the ${side} surface records no effects; effects not compared (annotations are)`)
  }
  const common = (s: Surface, other: Surface) => s.tools.map((t) => t.name).filter((n) => other.tools.some((t) => t.name === n))
  const order = same(common(before, after), common(after, before)) ? null : { before: common(before, after), after: common(after, before) }
  const errors = diffErrors(before, after)
  const prompt = diffPrompt(before, after, notes)
  const total = (s: Surface) => s.tools.reduce((sum, t) => sum + toolCost(t).tokens, 0)
  return {
    tools,
    order,
    errors,
    prompt,
    notes,
    tokens: { tools: { before: total(before), after: total(after) }, prompt: { before: promptTokens(before), after: promptTokens(after) } },
    isChanged: tools.length > 0 || order !== null || errors.length > 0 || prompt.length > 0,
  }
}
