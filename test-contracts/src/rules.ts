/**
 * The surface-contract rules as pure functions over plain JSON. Each returns the violations it
 * finds (empty = the rule holds), so the tests can show a rule passing on the real surface AND
 * failing on a deliberately broken one.
 */

export type Json = Record<string, unknown>

/** Property names that smuggle a discriminator or a wait into a schema. */
export const FORBIDDEN_PROPERTIES = ['until', 'timeout_secs', 'op', 'action', 'mode', 'stage'] as const

/** Strings that must occur in no description, prompt text or generated file. */
export const FORBIDDEN_STRINGS = ['until', 'timeout_secs'] as const

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v)

/** Every object schema inside `schema` (itself included), with its JSON pointer. */
export function objectSchemas(schema: unknown, at = '#'): Array<{ at: string; schema: Json }> {
  const out: Array<{ at: string; schema: Json }> = []
  const walk = (node: unknown, path: string) => {
    if (Array.isArray(node)) {
      node.forEach((n, i) => walk(n, `${path}/${i}`))
      return
    }
    if (!isObject(node)) return
    if (node['type'] === 'object' || isObject(node['properties'])) out.push({ at: path, schema: node })
    for (const [k, v] of Object.entries(node)) walk(v, `${path}/${k}`)
  }
  walk(schema, at)
  return out
}

/** Properties named `until`, `timeout_secs`, `op`, `action`, `mode` or `stage`, at any depth. */
export function forbiddenProperties(schema: unknown): string[] {
  const found: string[] = []
  for (const { at, schema: s } of objectSchemas(schema)) {
    for (const name of Object.keys((s['properties'] ?? {}) as Json)) {
      if ((FORBIDDEN_PROPERTIES as readonly string[]).includes(name)) found.push(`${at}/properties/${name}`)
    }
  }
  return found
}

/** A union of shapes at an input schema's top level is a discriminator in disguise. */
export function topLevelUnions(input: Json): string[] {
  return ['anyOf', 'oneOf', 'allOf', 'if', 'discriminator'].filter((k) => k in input).map((k) => `top-level ${k}`)
}

/** Occurrences of `until` / `timeout_secs` in a text, case-insensitive, with their context. */
export function forbiddenStrings(text: string): string[] {
  const found: string[] = []
  for (const word of FORBIDDEN_STRINGS) {
    const re = new RegExp(word, 'gi')
    for (const m of text.matchAll(re)) found.push(`"${word}" in …${text.slice(Math.max(0, m.index - 30), m.index + word.length + 30)}…`)
  }
  return found
}

/** An input schema is a closed object whose required names are all properties. */
export function inputShapeViolations(input: Json): string[] {
  const out: string[] = []
  if (input['type'] !== 'object') out.push('input is not an object schema')
  if (input['additionalProperties'] !== false) out.push('input lacks additionalProperties: false')
  const props = Object.keys((input['properties'] ?? {}) as Json)
  for (const r of (input['required'] ?? []) as string[]) if (!props.includes(r)) out.push(`required "${r}" is not a property`)
  return out
}

/** Every object in a result schema requires all of its properties and admits no others. */
export function resultShapeViolations(result: Json): string[] {
  const out: string[] = []
  for (const { at, schema } of objectSchemas(result)) {
    const props = Object.keys((schema['properties'] ?? {}) as Json)
    const required = new Set((schema['required'] ?? []) as string[])
    for (const p of props) if (!required.has(p)) out.push(`${at}: "${p}" is not required`)
    for (const r of required) if (!props.includes(r)) out.push(`${at}: required "${r}" is not a property`)
    if (schema['additionalProperties'] !== false) out.push(`${at}: lacks additionalProperties: false`)
  }
  return out
}

/** The tool list is exactly the expected names in order, and none is a mega-tool or a waiter. */
export function toolListViolations(names: readonly string[], expected: readonly string[]): string[] {
  const out: string[] = []
  if (names.join(',') !== expected.join(',')) out.push(`tools are [${names.join(', ')}], expected [${expected.join(', ')}]`)
  for (const n of names) {
    if (n === 'shell' || n === 'fs') out.push(`a tool is named "${n}"`)
    if (/wait/i.test(n)) out.push(`a tool named "${n}" waits`)
  }
  return out
}

/** `is_overwrite` is offered on exactly `allowed`; copy and move require src and dest. */
export function overwriteViolations(tools: ReadonlyArray<{ name: string; input: Json }>, allowed: readonly string[]): string[] {
  const out: string[] = []
  for (const t of tools) {
    const props = Object.keys((t.input['properties'] ?? {}) as Json)
    const has = props.includes('is_overwrite')
    if (has && !allowed.includes(t.name)) out.push(`${t.name} offers is_overwrite`)
    if (!has && allowed.includes(t.name)) out.push(`${t.name} lacks is_overwrite`)
    if (t.name === 'copy' || t.name === 'move') {
      const required = (t.input['required'] ?? []) as string[]
      for (const k of ['src', 'dest']) if (!required.includes(k)) out.push(`${t.name} does not require ${k}`)
    }
  }
  return out
}

/** The prompt names the fs tools in one line, the long-running pair in one, shell_run in the batch line. */
export function promptViolations(
  prompt: { executionLine: string | null; inspectLine: string; batchLine: string | null },
  fsNames: readonly string[],
): string[] {
  const out: string[] = []
  const names = (line: string) => new Set([...line.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]))
  const inspect = names(prompt.inspectLine)
  for (const n of fsNames) if (!inspect.has(n)) out.push(`inspect line omits ${n}`)
  const exec = names(prompt.executionLine ?? '')
  for (const n of ['shell_background', 'shell_logs']) if (!exec.has(n)) out.push(`long-running line omits ${n}`)
  if (!names(prompt.batchLine ?? '').has('shell_run')) out.push('batch line omits shell_run')
  return out
}
