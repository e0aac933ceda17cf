import { relative, isAbsolute } from 'node:path'
import { checkResult, contractOf, isToolName, type ErrorEnvelope, type ToolName, type ToolResult } from '@hands/contracts'
import type { CallOutcome } from '../outcome.ts'

/** Options for rendering: the workspace root, so paths print relative to it. */
export interface RenderOptions {
  workspace?: string
}

type Renderer<R> = (result: R, options: RenderOptions) => string

function where(path: string, options: RenderOptions): string {
  if (options.workspace === undefined || !isAbsolute(path)) return path
  const rel = relative(options.workspace, path)
  if (rel === '') return '.'
  return rel.startsWith('..') || isAbsolute(rel) ? path : rel
}

/** Milliseconds as a person reads them: `850 ms`, `2.5 s`, `3 min 20 s`. */
function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`
  const s = Math.round(ms / 1000)
  return `${Math.floor(s / 60)} min ${s % 60} s`
}

const exitText = (exit: number | null) => (exit === null ? 'no exit' : `exit ${exit}`)

/** Characters that could end a line, move the cursor or hide text where this text is shown. */
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]/g
const visible = (c: string) => `\\u${(c.codePointAt(0) as number).toString(16).padStart(4, '0')}`

/** Text from outside hands (a command, an id) on one line: line breaks and controls written out. */
function oneLine(text: string): string {
  return text.replace(/\n/g, '\\n').replace(UNSAFE, visible)
}

/**
 * Output a program printed, as indented lines: every line of it starts with two spaces, so a
 * printed `[note] …` or `$ cmd  [exit 0]` can never pass for hands' own lines, which start at the
 * first column; controls that could break or redraw a line are written out.
 */
function indented(lines: readonly string[]): string[] {
  return lines.map((l) => `  ${l.replace(UNSAFE, visible)}`)
}

function block(text: string): string[] {
  if (text === '') return []
  return text.endsWith('\n') ? indented(text.slice(0, -1).split('\n')) : [...indented(text.split('\n')), '[no newline at end]']
}

type Changes = ToolResult<'shell_run'>['commands'][number]['changes']

/**
 * What a command changed, in one line (`changed 3: new.txt (created), old.txt (deleted), …`),
 * with what the observer could not see on a `[changes]` line; nothing when it changed nothing and
 * everything was seen.
 */
function changesLines(c: Changes): string[] {
  const { counts } = c
  const total = counts.created + counts.modified + counts.deleted + counts.renamed + c.outside_roots
  const items = [
    ...c.created.map((p) => `${oneLine(p)} (created)`),
    ...c.modified.map((p) => `${oneLine(p)} (modified)`),
    ...c.deleted.map((p) => `${oneLine(p)} (deleted)`),
    ...c.renamed.map((r) => `${oneLine(r.from)} → ${oneLine(r.to)} (renamed)`),
  ]
  const more = (n: number, kind: string) => (n > 0 ? [`${n} more ${kind}`] : [])
  items.push(
    ...more(counts.created - c.created.length, 'created'),
    ...more(counts.modified - c.modified.length, 'modified'),
    ...more(counts.deleted - c.deleted.length, 'deleted'),
    ...more(counts.renamed - c.renamed.length, 'renamed'),
    ...(c.outside_roots > 0 ? [`${c.outside_roots} outside the roots`] : []),
  )
  const lines = total > 0 ? [`changed ${total}: ${items.join(', ')}`] : []
  if (c.note !== null) lines.push(`[changes] ${c.note}`)
  return lines
}

const shellRun: Renderer<ToolResult<'shell_run'>> = (r, o) => {
  const head = [exitText(r.exit), `${r.duration_ms} ms`, `cwd ${where(r.cwd, o)}`]
  if (r.timed_out) head.push('timed out')
  const lines = [head.join(' · ')]
  for (const c of r.commands) {
    const meta = [exitText(c.exit), `${c.duration_ms} ms`, ...(c.timed_out ? ['timed out'] : [])].join(' · ')
    lines.push(`$ ${oneLine(c.command)}  [${meta}]`, ...block(c.stdout))
    if (c.stderr !== '') lines.push('[stderr]', ...block(c.stderr))
    lines.push(...changesLines(c.changes))
    if (c.note !== null) lines.push(`[note] ${c.note}`)
  }
  return lines.join('\n')
}

const shellBackground: Renderer<ToolResult<'shell_background'>> = (r, o) => {
  const verb = r.is_already_running ? 'already running' : 'started'
  const lines = [`${verb} ${oneLine(r.id)} · pid ${r.pid} · ${r.status} · cwd ${where(r.cwd, o)}`, ...r.commands.map((c) => `$ ${oneLine(c)}`)]
  if (r.note !== null) lines.push(`[note] ${r.note}`)
  return lines.join('\n')
}

const shellLogs: Renderer<ToolResult<'shell_logs'>> = (r) => {
  const head = [
    oneLine(r.id),
    r.status,
    ...(r.exit === null ? [] : [exitText(r.exit)]),
    ...(r.is_screen ? ['full-screen program, its screen rows'] : []),
    `${r.lines.length} line${r.lines.length === 1 ? '' : 's'}`,
  ]
  if (r.dropped_lines > 0) head.push(`${r.dropped_lines} dropped unseen`)
  const processes = `${r.process_count} process${r.process_count === 1 ? '' : 'es'}`
  if (r.status === 'running') {
    if (r.silent_ms !== null) head.push(`silent ${duration(r.silent_ms)}`)
    if (r.cpu_ms !== null) head.push(`cpu ${duration(r.cpu_ms)}`)
    head.push(processes)
    if (r.is_waiting_for_input === true) head.push('waiting for input')
  } else if (r.process_count > 0) head.push(`${processes} left running`)
  return [head.join(' · '), ...indented(r.lines), ...changesLines(r.changes)].join('\n')
}

const shellType: Renderer<ToolResult<'shell_type'>> = (r) => `typed ${JSON.stringify(r.text)}${r.is_enter ? ' + Enter' : ''} into ${r.id} · ${r.status}`

const shellStop: Renderer<ToolResult<'shell_stop'>> = (r) =>
  [
    `${oneLine(r.id)} · ${r.status}${r.exit === null ? '' : ` · ${exitText(r.exit)}`}`,
    ...changesLines(r.changes),
    ...(r.note === null ? [] : [`[note] ${r.note}`]),
  ].join('\n')

const copy: Renderer<ToolResult<'copy'>> = (r) => `copied ${r.src} → ${r.dest}`
const move: Renderer<ToolResult<'move'>> = (r) => `moved ${r.src} → ${r.dest}`
const del: Renderer<ToolResult<'delete'>> = (r) => r.paths.map((p) => `${p.is_deleted ? 'deleted' : 'missing'} ${p.path}`).join('\n')
const mkdir: Renderer<ToolResult<'create_directory'>> = (r) => r.paths.map((p) => `${p.is_created ? 'created' : 'exists '} ${p.path}`).join('\n')
const exists: Renderer<ToolResult<'file_exists'>> = (r) => r.paths.map((p) => `${p.is_exists ? 'exists' : 'absent'} ${p.path}`).join('\n')

const RENDERERS: Record<ToolName, Renderer<never>> = {
  shell_run: shellRun,
  shell_background: shellBackground,
  shell_logs: shellLogs,
  shell_type: shellType,
  shell_stop: shellStop,
  copy,
  move,
  delete: del,
  create_directory: mkdir,
  file_exists: exists,
}

/**
 * The compact text of a result, for transcripts and MCP `content`. An unknown tool, or a result
 * that does not match today's contract (an older transcript), renders generically as JSON.
 */
export function renderResult(tool: string, result: unknown, options: RenderOptions = {}): string {
  if (isToolName(tool) && checkResult(contractOf(tool), result).ok) {
    return (RENDERERS[tool] as Renderer<unknown>)(result, options)
  }
  return `${tool}: ${JSON.stringify(result)}`
}

/** `code: message — hint`, the text of a failure. */
export function renderError(error: Pick<ErrorEnvelope, 'code' | 'message' | 'hint'>): string {
  return `${error.code}: ${error.message} — ${error.hint}`
}

/** The text a model reads for one call: the rendered result, or `code: message — hint` for a failure. */
export function renderOutcome(outcome: CallOutcome, options: RenderOptions = {}): string {
  return outcome.ok ? renderResult(outcome.tool, outcome.result, options) : renderError(outcome.error)
}
