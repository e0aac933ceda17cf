/** Reading the plain JSON Schemas the contracts produce, for the renderers. */

export type Json = Record<string, unknown>

export interface Property {
  name: string
  schema: Json
  isRequired: boolean
}

/** The properties of an object schema in declaration order. */
export function propertiesOf(schema: Json): Property[] {
  const props = (schema['properties'] ?? {}) as Record<string, Json>
  const required = (schema['required'] ?? []) as string[]
  return Object.entries(props).map(([name, s]) => ({ name, schema: s, isRequired: required.includes(name) }))
}

/** A compact type for review files: `string`, `integer 1..2000`, `string[]`, `integer | null`. */
export function typeText(schema: Json): string {
  if (Array.isArray(schema['enum'])) return (schema['enum'] as unknown[]).map((e) => JSON.stringify(e)).join(' | ')
  if (Array.isArray(schema['anyOf'])) return (schema['anyOf'] as Json[]).map(typeText).join(' | ')
  switch (schema['type']) {
    case 'string':
      return schema['minLength'] === 1 ? 'string (non-empty)' : 'string'
    case 'integer': {
      const lo = schema['minimum']
      const hi = schema['maximum']
      if (lo !== undefined && hi !== undefined) return `integer ${lo}..${hi}`
      if (lo !== undefined) return `integer ≥ ${lo}`
      return 'integer'
    }
    case 'array': {
      const item = schema['items'] as Json
      const inner = typeText(item).replace(/ \(non-empty\)$/, '')
      const base = item['type'] === 'object' ? 'object[]' : /[ |]/.test(inner) ? `(${inner})[]` : `${inner}[]`
      const notes = [
        item['minLength'] === 1 ? 'non-empty items' : '',
        typeof schema['minItems'] === 'number' ? `≥ ${schema['minItems']} item${schema['minItems'] === 1 ? '' : 's'}` : '',
      ].filter(Boolean)
      return notes.length ? `${base} (${notes.join(', ')})` : base
    }
    case 'object':
      return 'object'
    default:
      return String(schema['type'] ?? 'unknown')
  }
}

/** Flatten a result schema to `key: type` rows, nested arrays of objects as `key[].child`. */
export function resultRows(schema: Json, prefix = ''): Array<{ key: string; type: string; description: string }> {
  const rows: Array<{ key: string; type: string; description: string }> = []
  for (const p of propertiesOf(schema)) {
    const key = `${prefix}${p.name}`
    rows.push({ key, type: typeText(p.schema), description: String(p.schema['description'] ?? '') })
    const items = p.schema['items'] as Json | undefined
    if (p.schema['type'] === 'array' && items?.['type'] === 'object') rows.push(...resultRows(items, `${key}[].`))
  }
  return rows
}

export function pascal(name: string): string {
  return name
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('')
}
