import { Ajv2020 } from 'ajv/dist/2020.js'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ErrorEnvelope, TOOLS, checkInput, checkSchema } from '@hands/contracts'
import { validValue, wrongTypeValue } from '../src/arbitrary.ts'
import type { Json } from '../src/rules.ts'
import { plain } from './helpers.ts'

const ajv = new Ajv2020({ strict: true, allErrors: true })

const schemas = TOOLS.flatMap((t) => [
  { label: `${t.name} input`, schema: t.input },
  { label: `${t.name} result`, schema: t.result },
]).concat([{ label: 'error envelope', schema: ErrorEnvelope }])

describe('a second validator (Ajv, draft 2020-12, strict)', () => {
  it('compiles every input, result and error schema', () => {
    for (const s of schemas) expect(() => ajv.compile(plain(s.schema)), s.label).not.toThrow()
  })

  it('agrees with TypeBox on valid samples, arbitrary JSON and near misses', () => {
    for (const s of schemas) {
      const viaAjv = ajv.compile(plain(s.schema))
      const near = validValue(plain(s.schema)).chain((v) =>
        fc.oneof(
          fc.constant(v),
          fc.jsonValue().map((j) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? { ...v, extra: j } : j)),
        ),
      )
      fc.assert(
        fc.property(fc.oneof(near, fc.jsonValue()), (value) => {
          expect(checkSchema(s.schema, value).ok, s.label).toBe(viaAjv(value))
        }),
        { numRuns: 300 },
      )
    }
  })
})

type Mutation = { kind: string; property: string; apply: (input: Json) => Json }

/** Every single mutation of a valid input that the contract must reject. */
function mutationsOf(schema: Json): Mutation[] {
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

describe('input properties (fast-check)', () => {
  for (const t of TOOLS) {
    const schema = plain(t.input)

    it(`${t.name} accepts every valid input generated from its schema`, () => {
      fc.assert(fc.property(validValue(schema), (input) => {
        expect(checkInput(t, input).ok).toBe(true)
      }), { numRuns: 200 })
    })

    it(`${t.name} rejects each single mutation with an issue naming the property`, () => {
      const mutations = mutationsOf(schema)
      expect(mutations.length).toBeGreaterThanOrEqual(3)
      fc.assert(
        fc.property(validValue(schema) as fc.Arbitrary<Json>, fc.constantFrom(...mutations), (input, m) => {
          const outcome = checkInput(t, m.apply(input))
          expect(outcome.ok, `${m.kind} of ${m.property}`).toBe(false)
          if (!outcome.ok) {
            const named = outcome.issues.find((i) => i.property === m.property)
            expect(named, `${m.kind}: issues ${JSON.stringify(outcome.issues)}`).toBeDefined()
            expect(named?.message).toContain(m.property)
            expect(named?.allowed.length).toBeGreaterThan(0)
          }
        }),
        { numRuns: 300 },
      )
    })
  }

  it('says what is allowed for n out of range', () => {
    const logs = TOOLS.find((t) => t.name === 'shell_logs')
    if (logs === undefined) throw new Error('shell_logs missing')
    const outcome = checkInput(logs, { id: 'dev', n: 5000 })
    expect(outcome).toMatchObject({ ok: false, issues: [{ property: 'n', allowed: 'an integer from 1 to 2000 (default 200)' }] })
  })
})
