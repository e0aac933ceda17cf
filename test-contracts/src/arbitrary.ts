import fc from 'fast-check'
import type { Json } from './rules.ts'

/** A fast-check arbitrary of values valid under one of our contract schemas. */
export function validValue(schema: Json): fc.Arbitrary<unknown> {
  if (Array.isArray(schema['enum'])) return fc.constantFrom(...(schema['enum'] as unknown[]))
  if (Array.isArray(schema['anyOf'])) return fc.oneof(...(schema['anyOf'] as Json[]).map(validValue))
  switch (schema['type']) {
    case 'string':
      return fc.string({ minLength: (schema['minLength'] as number | undefined) ?? 0, maxLength: 40, unit: 'grapheme' })
    case 'integer':
      return fc.integer({
        min: (schema['minimum'] as number | undefined) ?? -1_000_000,
        max: (schema['maximum'] as number | undefined) ?? 1_000_000,
      })
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    case 'array':
      return fc.array(validValue(schema['items'] as Json), { minLength: (schema['minItems'] as number | undefined) ?? 0, maxLength: 5 })
    case 'object': {
      const props = (schema['properties'] ?? {}) as Record<string, Json>
      const required = (schema['required'] ?? []) as string[]
      const model: Record<string, fc.Arbitrary<unknown>> = {}
      for (const [k, s] of Object.entries(props)) model[k] = validValue(s)
      return fc.record(model, { requiredKeys: required })
    }
    default:
      throw new Error(`no arbitrary for schema ${JSON.stringify(schema)}`)
  }
}

/** A value of a different JSON type than `schema` admits. */
export function wrongTypeValue(schema: Json): unknown {
  const types = new Set<string>()
  const collect = (s: Json) => {
    if (Array.isArray(s['anyOf'])) (s['anyOf'] as Json[]).forEach(collect)
    else if (Array.isArray(s['enum'])) types.add('string')
    else types.add(String(s['type']))
  }
  collect(schema)
  if (!types.has('object')) return { not: 'this' }
  if (!types.has('string')) return 'wrong'
  return 42
}

/** One way to break a valid input, and the property an error must name. */
export type Mutation = { kind: string; property: string; apply: (input: Json) => Json }

/** Every single mutation of a valid input that the contract must reject. */
export function mutationsOf(schema: Json): Mutation[] {
  const props = (schema['properties'] ?? {}) as Record<string, Json>
  const required = (schema['required'] ?? []) as string[]
  const out: Mutation[] = []
  for (const name of required) {
    out.push({ kind: 'missing required', property: name, apply: ({ [name]: _, ...rest }) => rest })
  }
  for (const [name, s] of Object.entries(props)) {
    out.push({ kind: 'wrong type', property: name, apply: (i) => ({ ...i, [name]: wrongTypeValue(s) }) })
    if (s['type'] === 'string' && s['minLength'] === 1) out.push({ kind: 'empty string', property: name, apply: (i) => ({ ...i, [name]: '' }) })
    if (s['type'] === 'array' && typeof s['minItems'] === 'number') {
      out.push({ kind: 'empty array', property: name, apply: (i) => ({ ...i, [name]: [] }) })
      const items = s['items'] as Json
      if (items['minLength'] === 1) out.push({ kind: 'empty item', property: `${name}[0]`, apply: (i) => ({ ...i, [name]: [''] }) })
    }
    if (s['type'] === 'integer') {
      if (typeof s['minimum'] === 'number') out.push({ kind: 'below range', property: name, apply: (i) => ({ ...i, [name]: (s['minimum'] as number) - 1 }) })
      if (typeof s['maximum'] === 'number') out.push({ kind: 'above range', property: name, apply: (i) => ({ ...i, [name]: (s['maximum'] as number) + 1 }) })
      out.push({ kind: 'not an integer', property: name, apply: (i) => ({ ...i, [name]: 1.5 }) })
    }
  }
  out.push({ kind: 'extra property', property: 'extra_thing', apply: (i) => ({ ...i, extra_thing: true }) })
  return out
}
