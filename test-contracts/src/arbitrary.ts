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
