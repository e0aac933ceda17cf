import { diffWords } from 'diff'
import { toolCost } from '@hands/surface/adapters'
import { propertiesOf, resultRows, typeText, type Json } from './schema.ts'
import type { Surface, SurfaceTool } from './surface.ts'

/** `[-removed-]{+added+}` word diff, git's plain word-diff notation. */
export function wordDiff(before: string, after: string): string {
  return diffWords(before, after)
    .map((part) => (part.added ? `{+${part.value}+}` : part.removed ? `[-${part.value}-]` : part.value))
    .join('')
}

function propertySummary(schema: Json, isRequired: boolean): string {
  const d = schema['default']
  return `${typeText(schema)}, ${isRequired ? 'required' : 'optional'}${d === undefined ? '' : `, default ${JSON.stringify(d)}`}`
}

function diffTool(before: SurfaceTool, after: SurfaceTool): string[] {
  const out: string[] = []
  if (before.title !== after.title) out.push(`  title: ${wordDiff(before.title, after.title)}`)
  if (before.description !== after.description) out.push(`  description: ${wordDiff(before.description, after.description)}`)
  if (before.call.join(',') !== after.call.join(',')) out.push(`  call: (${before.call.join(', ')}) -> (${after.call.join(', ')})`)
  if (before.toggle !== after.toggle) out.push(`  toggle: ${before.toggle} -> ${after.toggle}`)
  for (const key of new Set([...Object.keys(before.annotations), ...Object.keys(after.annotations)])) {
    if (before.annotations[key] !== after.annotations[key]) out.push(`  annotation ${key}: ${before.annotations[key]} -> ${after.annotations[key]}`)
  }

  const oldProps = new Map(propertiesOf(before.input_schema).map((p) => [p.name, p]))
  const newProps = new Map(propertiesOf(after.input_schema).map((p) => [p.name, p]))
  for (const [name, p] of newProps) {
    const o = oldProps.get(name)
    if (o === undefined) out.push(`  + input ${name} (${propertySummary(p.schema, p.isRequired)})`)
    else {
      const was = propertySummary(o.schema, o.isRequired)
      const now = propertySummary(p.schema, p.isRequired)
      if (was !== now) out.push(`  ~ input ${name}: ${was} -> ${now}`)
      const dWas = String(o.schema['description'] ?? '')
      const dNow = String(p.schema['description'] ?? '')
      if (dWas !== dNow) out.push(`  ~ input ${name} description: ${wordDiff(dWas, dNow)}`)
    }
  }
  for (const [name, o] of oldProps) if (!newProps.has(name)) out.push(`  - input ${name} (${propertySummary(o.schema, o.isRequired)})`)

  const oldKeys = new Map(resultRows(before.result_schema).map((r) => [r.key, r.type]))
  const newKeys = new Map(resultRows(after.result_schema).map((r) => [r.key, r.type]))
  for (const [key, type] of newKeys) {
    const was = oldKeys.get(key)
    if (was === undefined) out.push(`  + result ${key}: ${type}`)
    else if (was !== type) out.push(`  ~ result ${key}: ${was} -> ${type}`)
  }
  for (const [key, type] of oldKeys) if (!newKeys.has(key)) out.push(`  - result ${key}: ${type}`)

  const tBefore = toolCost(before).tokens
  const tAfter = toolCost(after).tokens
  if (out.length > 0 || tBefore !== tAfter) {
    const delta = tAfter - tBefore
    out.push(`  tokens: ${tBefore} -> ${tAfter} (${delta >= 0 ? '+' : ''}${delta})`)
  }
  return out
}

/** A reviewer's account of how the surface changed, or "no surface change". */
export function diffSurfaces(before: Pick<Surface, 'tools'>, after: Pick<Surface, 'tools'>): string {
  const lines: string[] = []
  const oldTools = new Map(before.tools.map((t) => [t.name, t]))
  const newTools = new Map(after.tools.map((t) => [t.name, t]))
  for (const t of after.tools) {
    const o = oldTools.get(t.name)
    if (o === undefined) {
      lines.push(`+ tool ${t.name} (${toolCost(t).tokens} tokens)`, `  description: ${t.description}`)
      continue
    }
    const changes = diffTool(o, t)
    if (changes.length > 0) lines.push(`~ tool ${t.name}`, ...changes)
  }
  for (const o of before.tools) if (!newTools.has(o.name)) lines.push(`- tool ${o.name} (${toolCost(o).tokens} tokens)`)
  const order = (s: Pick<Surface, 'tools'>) => s.tools.map((t) => t.name).join(',')
  if (order(before) !== order(after) && lines.length === 0) lines.push(`~ tool order: ${order(before)} -> ${order(after)}`)
  if (lines.length === 0) return 'no surface change'
  const total = (s: Pick<Surface, 'tools'>) => s.tools.reduce((a, t) => a + toolCost(t).tokens, 0)
  const d = total(after) - total(before)
  lines.push(`total tokens: ${total(before)} -> ${total(after)} (${d >= 0 ? '+' : ''}${d})`)
  return lines.join('\n')
}
