import { Ajv2020 } from 'ajv/dist/2020.js'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ErrorEnvelope, TOOLS, checkInput, checkSchema } from '@hands/contracts'
import { mutationsOf, validValue } from '../src/arbitrary.ts'
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

describe('input properties (fast-check)', () => {
  for (const t of TOOLS) {
    const schema = plain(t.input)

    it(`${t.name} accepts every valid input generated from its schema`, () => {
      fc.assert(
        fc.property(validValue(schema), (input) => {
          expect(checkInput(t, input).ok).toBe(true)
        }),
        { numRuns: 200 },
      )
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
