import type { PromptProse } from '@hands/contracts'
import { textCost, toolCost } from '../adapters/token-cost.ts'
import type { Json, Surface, SurfacePrompt, SurfaceTool } from './surface.ts'

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
  /** The same for a harness without a code tool; a side is null where that surface records no such variant. */
  tokensNoCodeTool: TokenDelta
}

/** An example whose rendered text differs (`rendering` in the surface file), with its lines on each side. */
export interface RenderingChange {
  tool: string
  example: string
  kind: 'added' | 'removed' | 'changed'
  /** The lines before; absent when added. */
  before?: string[]
  /** The lines after; absent when removed. */
  after?: string[]
}

/** Everything that differs between two surfaces, in surface order. */
export interface SurfaceDiff {
  tools: ToolDiff[]
  /** The order of the tools both sides have, when it differs. */
  order: { before: string[]; after: string[] } | null
  errors: Change[]
  prompt: Change[]
  /** Rendered example texts added, removed or changed, per tool in surface order. */
  rendering: RenderingChange[]
  /** What could not be compared (an older surface file without prompt prose or effects). */
  notes: string[]
  /** All tools and the prompt prose (shell tools on), with the default code tool and without one. */
  tokens: { tools: TokenDelta; prompt: TokenDelta; toolsNoCodeTool: TokenDelta; promptNoCodeTool: TokenDelta }
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

/** Where a description without a code tool is reported. */
const NO_CODE_TOOL_DESCRIPTION = 'description (no code tool)'

/** A tool's description for a harness without a code tool; undefined when the surface records no such variant. */
function noCodeToolDescription(s: Surface, t: SurfaceTool): string | undefined {
  return s.no_code_tool === undefined ? undefined : (s.no_code_tool.descriptions[t.name] ?? t.description)
}

/** What the model pays for a tool without a code tool; null where there is no tool or no variant. */
function noCodeToolTokens(s: Surface, t: SurfaceTool | undefined): number | null {
  const description = t === undefined ? undefined : noCodeToolDescription(s, t)
  return t === undefined || description === undefined ? null : toolCost({ ...t, description }).tokens
}

/** The fields of a tool as the diff shows them, in the order a reviewer reads them. */
function toolFields(s: Surface, t: SurfaceTool): Array<[string, unknown]> {
  const noCodeTool = noCodeToolDescription(s, t)
  return [
    ['title', t.title],
    ['description', t.description],
    ...(noCodeTool === undefined || noCodeTool === t.description ? [] : [[NO_CODE_TOOL_DESCRIPTION, noCodeTool] as [string, unknown]]),
    ['call', t.call],
    ['effect', t.effect],
    ['toggle', t.toggle],
    ['annotations', t.annotations],
    ['input', t.input_schema],
    ['result', t.result_schema],
  ]
}

function diffTool(sa: Surface, a: SurfaceTool, sb: Surface, b: SurfaceTool): Change[] {
  const out: Change[] = []
  for (const key of ['title', 'description'] as const) {
    if (a[key] !== b[key]) out.push({ path: key, kind: 'changed', before: a[key], after: b[key], isProse: true })
  }
  // Without a code tool a description is reported only where it does not just follow the tool's own;
  // against a surface that records no such variant, one that differs shows as added (or removed).
  const va = noCodeToolDescription(sa, a)
  const vb = noCodeToolDescription(sb, b)
  if (va !== undefined && vb !== undefined && va !== vb && (va !== a.description || vb !== b.description))
    out.push({ path: NO_CODE_TOOL_DESCRIPTION, kind: 'changed', before: va, after: vb, isProse: true })
  else if (va === undefined && vb !== undefined && vb !== b.description) out.push({ path: NO_CODE_TOOL_DESCRIPTION, kind: 'added', after: vb, isProse: true })
  else if (va !== undefined && vb === undefined && va !== a.description)
    out.push({ path: NO_CODE_TOOL_DESCRIPTION, kind: 'removed', before: va, isProse: true })
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
  const isProse = (path: string) => PROSE_KEYS.has(path) || path === NO_CODE_TOOL_DESCRIPTION
  const tokens = (o: SurfaceTool | undefined, t: SurfaceTool | undefined) => ({
    tokens: { before: toolTokens(o), after: toolTokens(t) },
    tokensNoCodeTool: { before: noCodeToolTokens(a, o), after: noCodeToolTokens(b, t) },
  })
  for (const t of b.tools) {
    const o = before.get(t.name)
    if (o === undefined) {
      const changes = toolFields(b, t).map(([path, value]): Change => ({ path, kind: 'added', after: value, isProse: isProse(path) }))
      out.push({ name: t.name, status: 'added', changes, ...tokens(undefined, t) })
      continue
    }
    const changes = diffTool(a, o, b, t)
    if (changes.length > 0) out.push({ name: t.name, status: 'changed', changes, ...tokens(o, t) })
  }
  for (const o of a.tools) {
    if (after.has(o.name)) continue
    const changes = toolFields(a, o).map(([path, value]): Change => ({ path, kind: 'removed', before: value, isProse: isProse(path) }))
    out.push({ name: o.name, status: 'removed', changes, ...tokens(o, undefined) })
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

const NO_PROSE: SurfacePrompt = {
  shell_on: { executionLine: null, inspectLine: null, batchLine: null, codeToolParagraph: null } as unknown as PromptProse,
  shell_off: { executionLine: null, inspectLine: null, batchLine: null, codeToolParagraph: null } as unknown as PromptProse,
}

/**
 * Each line of the prompt prose with the shell tools on and off. A side that records none is
 * skipped, or with `isMissingEmpty` counts as having no lines (so the other side's show as added or removed).
 */
function diffPromptOf(a: SurfacePrompt | undefined, b: SurfacePrompt | undefined, prefix: string, isMissingEmpty = false): Change[] {
  if (a === undefined && b === undefined) return []
  if (a === undefined || b === undefined) {
    if (!isMissingEmpty) return []
    return diffPromptOf(a ?? NO_PROSE, b ?? NO_PROSE, prefix)
  }
  const out: Change[] = []
  for (const [key, label] of VARIANTS) {
    const pa = (a[key] ?? {}) as Partial<PromptProse>
    const pb = (b[key] ?? {}) as Partial<PromptProse>
    for (const line of [...new Set([...Object.keys(pa), ...Object.keys(pb)])] as Array<keyof PromptProse>) {
      const before = pa[line] ?? null
      const after = pb[line] ?? null
      if (before === after) continue
      const path = `${prefix}${label}: ${line}`
      if (before === null) out.push({ path, kind: 'added', after, isProse: true })
      else if (after === null) out.push({ path, kind: 'removed', before, isProse: true })
      else out.push({ path, kind: 'changed', before, after, isProse: true })
    }
  }
  return out
}

function diffPrompt(a: Surface, b: Surface): Change[] {
  return [...diffPromptOf(a.prompt, b.prompt, ''), ...diffPromptOf(a.no_code_tool?.prompt, b.no_code_tool?.prompt, 'no code tool, ', true)]
}

/** What one side of the diff records and the other does not, as notes. */
function missingNotes(before: Surface, after: Surface): string[] {
  const notes: string[] = []
  const sides = [
    ['old', before],
    ['new', after],
  ] as const
  for (const [side, s] of sides) {
    if (s.tools.some((t) => t.effect === undefined)) notes.push(`the ${side} surface records no effects; effects not compared (annotations are)`)
  }
  for (const [side, s] of sides) {
    const other = s === before ? after : before
    if (s.prompt === undefined && other.prompt !== undefined) notes.push(`the ${side} surface records no prompt prose; prompt not compared`)
    if (s.rendering === undefined && other.rendering !== undefined)
      notes.push(
        `the ${side} surface records no rendered examples; the ${side === 'old' ? 'new' : 'old'} one's show as ${side === 'old' ? 'added' : 'removed'}`,
      )
    if (s.no_code_tool === undefined && other.no_code_tool !== undefined)
      notes.push(
        `the ${side} surface records nothing for a harness without a code tool; what the ${side === 'old' ? 'new' : 'old'} one records for it shows as ${side === 'old' ? 'added' : 'removed'}`,
      )
  }
  return notes
}

/** Each tool's rendered examples, matched by name; a side that records none counts as having none. */
function diffRendering(a: Surface, b: Surface): RenderingChange[] {
  if (a.rendering === undefined && b.rendering === undefined) return []
  const before = a.rendering ?? {}
  const after = b.rendering ?? {}
  const tools = [...new Set([...Object.keys(after), ...Object.keys(before)])]
  const out: RenderingChange[] = []
  for (const tool of tools) {
    const was = new Map((before[tool] ?? []).map((e) => [e.example, e.lines]))
    const now = new Map((after[tool] ?? []).map((e) => [e.example, e.lines]))
    for (const [example, lines] of now) {
      const old = was.get(example)
      if (old === undefined) out.push({ tool, example, kind: 'added', after: lines })
      else if (!same(old, lines)) out.push({ tool, example, kind: 'changed', before: old, after: lines })
    }
    for (const [example, lines] of was) if (!now.has(example)) out.push({ tool, example, kind: 'removed', before: lines })
  }
  return out
}

/** What the model pays for the prompt prose with the shell tools on (as generated/budget.json counts it). */
function promptTokens(p: PromptProse | undefined): number | null {
  if (p === undefined) return null
  const text = [p.executionLine, p.inspectLine, p.batchLine, p.codeToolParagraph].filter((l): l is string => l !== null).join('\n')
  return textCost(text).tokens
}

/** All tools' tokens without a code tool; null when the surface records no such variant. */
function noCodeToolTotal(s: Surface): number | null {
  if (s.no_code_tool === undefined) return null
  return s.tools.reduce((sum, t) => sum + (noCodeToolTokens(s, t) ?? 0), 0)
}

/** Compare two surfaces: every change per tool, in the error codes and in the prompt prose, with token deltas. */
export function diffSurfaces(before: Surface, after: Surface): SurfaceDiff {
  const notes = missingNotes(before, after)
  const tools = diffTools(before, after)
  const common = (s: Surface, other: Surface) => s.tools.map((t) => t.name).filter((n) => other.tools.some((t) => t.name === n))
  const order = same(common(before, after), common(after, before)) ? null : { before: common(before, after), after: common(after, before) }
  const errors = diffErrors(before, after)
  const prompt = diffPrompt(before, after)
  const rendering = diffRendering(before, after)
  const total = (s: Surface) => s.tools.reduce((sum, t) => sum + toolCost(t).tokens, 0)
  return {
    tools,
    order,
    errors,
    prompt,
    rendering,
    notes,
    tokens: {
      tools: { before: total(before), after: total(after) },
      prompt: { before: promptTokens(before.prompt?.shell_on), after: promptTokens(after.prompt?.shell_on) },
      toolsNoCodeTool: { before: noCodeToolTotal(before), after: noCodeToolTotal(after) },
      promptNoCodeTool: { before: promptTokens(before.no_code_tool?.prompt.shell_on), after: promptTokens(after.no_code_tool?.prompt.shell_on) },
    },
    isChanged: tools.length > 0 || order !== null || errors.length > 0 || prompt.length > 0 || rendering.length > 0,
  }
}
