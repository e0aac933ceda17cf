import type { Static, TSchema } from 'typebox'
import { Compile } from 'typebox/compile'
import type { ToolContract } from './descriptor.ts'
import { ToolError } from './errors.ts'

/** One reason an input was rejected. */
export interface InputIssue {
  /** The offending property as a path (`commands[0]`, `n`), or `` for the input itself. */
  property: string
  /** What was wrong. */
  message: string
  /** What the schema allows at that property. */
  allowed: string
}

export type CheckOutcome<T> = { ok: true; value: T } | { ok: false; issues: InputIssue[] }

type Validator = ReturnType<typeof Compile>
const compiled = new WeakMap<TSchema, Validator>()

function validatorFor(schema: TSchema): Validator {
  let v = compiled.get(schema)
  if (v === undefined) {
    v = Compile(schema)
    compiled.set(schema, v)
  }
  return v
}

type Json = Record<string, unknown>

/** Plain words for what a schema accepts, e.g. "an integer from 1 to 2000 (default 200)". */
export function describeAllowed(schema: unknown): string {
  const s = (schema ?? {}) as Json
  const suffix = s['default'] !== undefined ? ` (default ${JSON.stringify(s['default'])})` : ''
  if (Array.isArray(s['enum'])) return `one of ${(s['enum'] as unknown[]).map((e) => JSON.stringify(e)).join(', ')}`
  if (Array.isArray(s['anyOf'])) return (s['anyOf'] as unknown[]).map(describeAllowed).join(' or ') + suffix
  switch (s['type']) {
    case 'string':
      return (s['minLength'] === 1 ? 'a non-empty string' : 'a string') + suffix
    case 'integer': {
      const lo = s['minimum']
      const hi = s['maximum']
      const range = typeof lo === 'number' && typeof hi === 'number' ? ` from ${lo} to ${hi}` : typeof lo === 'number' ? ` >= ${lo}` : ''
      return `an integer${range}${suffix}`
    }
    case 'boolean':
      return `true or false${suffix}`
    case 'null':
      return 'null'
    case 'array': {
      const items = describeAllowed(s['items']).replace(/^an? /, '')
      const min = typeof s['minItems'] === 'number' && s['minItems'] > 0 ? ` with at least ${s['minItems']} item${s['minItems'] === 1 ? '' : 's'}` : ''
      return `an array of ${items.replace(/string$/, 'strings')}${min}`
    }
    case 'object': {
      const props = Object.keys((s['properties'] ?? {}) as Json)
      const required = (s['required'] ?? []) as string[]
      const optional = props.filter((p) => !required.includes(p))
      return `an object with ${required.length ? `required ${required.join(', ')}` : 'no required properties'}${optional.length ? `; optional ${optional.join(', ')}` : ''}; nothing else`
    }
    default:
      return 'any value'
  }
}

function subschema(root: unknown, segments: string[]): unknown {
  let s = root as Json | undefined
  for (const seg of segments) {
    if (s === undefined) return undefined
    if (s['type'] === 'array') s = s['items'] as Json
    else s = ((s['properties'] ?? {}) as Json)[seg] as Json | undefined
  }
  return s
}

function pointerSegments(pointer: string): string[] {
  return pointer === ''
    ? []
    : pointer
        .slice(1)
        .split('/')
        .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
}

function propertyPath(segments: string[]): string {
  return segments.reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg), '')
}

function valueAt(value: unknown, segments: string[]): unknown {
  let v = value
  for (const seg of segments) v = v !== null && typeof v === 'object' ? (v as Json)[seg] : undefined
  return v
}

function shown(v: unknown): string {
  const text = v === undefined ? 'undefined' : JSON.stringify(v)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

/** Check a value against a schema and explain every violation by property. */
export function checkSchema<T>(schema: TSchema, value: unknown): CheckOutcome<T> {
  const v = validatorFor(schema)
  if (v.Check(value)) return { ok: true, value: value as T }
  const issues: InputIssue[] = []
  const seen = new Set<string>()
  const add = (segments: string[], message: string) => {
    const property = propertyPath(segments)
    if (seen.has(property)) return
    seen.add(property)
    issues.push({ property, message, allowed: describeAllowed(subschema(schema, segments)) })
  }
  const errors = [...v.Errors(value)] as Array<{ keyword: string; instancePath: string; params: Json; message: string }>
  // Name problems with property names before problems with values.
  for (const e of errors) {
    const at = pointerSegments(e.instancePath)
    if (e.keyword === 'required') {
      for (const name of (e.params['requiredProperties'] ?? []) as string[]) add([...at, name], `\`${propertyPath([...at, name])}\` is required`)
    } else if (e.keyword === 'additionalProperties') {
      const parent = subschema(schema, at) as Json | undefined
      const known = Object.keys((parent?.['properties'] ?? {}) as Json)
      for (const name of (e.params['additionalProperties'] ?? []) as string[]) {
        const property = propertyPath([...at, name])
        if (seen.has(property)) continue
        seen.add(property)
        issues.push({ property, message: `\`${property}\` is not a property of this tool`, allowed: `only ${known.map((k) => `\`${k}\``).join(', ')}` })
      }
    }
  }
  for (const e of errors) {
    if (e.keyword === 'required' || e.keyword === 'additionalProperties') continue
    const at = pointerSegments(e.instancePath)
    if (e.keyword === 'boolean' && seen.has(propertyPath(at))) continue
    const property = propertyPath(at)
    const subject = property === '' ? 'the input' : `\`${property}\``
    add(at, `${subject} ${e.message} (got ${shown(valueAt(value, at))})`)
  }
  if (issues.length === 0) issues.push({ property: '', message: 'the input does not match the schema', allowed: describeAllowed(schema) })
  return { ok: false, issues }
}

/** Check a tool's input against its contract. */
export function checkInput<I extends TSchema>(contract: Pick<ToolContract, 'input'> & { input: I }, value: unknown) {
  return checkSchema(contract.input, value)
}

/** Check a tool's result against its contract. */
export function checkResult(contract: Pick<ToolContract, 'result'>, value: unknown) {
  return checkSchema(contract.result, value)
}

/** One sentence for a rejected input and the hint that says what is allowed. */
export function explainIssues(issues: readonly InputIssue[]): { message: string; hint: string } {
  return {
    message: issues.map((i) => i.message).join('; '),
    hint: issues.map((i) => (i.property === '' ? `input: ${i.allowed}` : `\`${i.property}\`: ${i.allowed}`)).join('; '),
  }
}

/**
 * The input, when it matches the contract; otherwise throw the `invalid_input` ToolError
 * (preflight) naming each bad property and what is allowed. Runtimes call this as defence for
 * direct library callers; the surface has already validated.
 */
export function assertInput<I extends TSchema>(contract: { input: I }, value: unknown): Static<I> {
  const outcome = checkSchema(contract.input, value)
  if (outcome.ok) return outcome.value as Static<I>
  const { message, hint } = explainIssues(outcome.issues)
  throw new ToolError({ code: 'invalid_input', message, hint, is_preflight: true })
}
