import type { Surface, SurfaceTool } from '../surface.ts'
import { pascal, propertiesOf, type Json } from '../schema.ts'
import { finish, hashHeader, slashHeader } from './header.ts'

/** A language's spelling of JSON Schema types, for the two stub files. */
interface Dialect {
  string: string
  integer: string
  boolean: string
  null: string
  array: (item: string) => string
  literal: (value: unknown) => string
  union: (parts: string[]) => string
}

const PY: Dialect = {
  string: 'str',
  integer: 'int',
  boolean: 'bool',
  null: 'None',
  array: (item) => `list[${item}]`,
  literal: (v) => JSON.stringify(v),
  union: (parts) => parts.join(' | '),
}

const TS: Dialect = {
  string: 'string',
  integer: 'number',
  boolean: 'boolean',
  null: 'null',
  array: (item) => (/[ |]/.test(item) ? `Array<${item}>` : `${item}[]`),
  literal: (v) => JSON.stringify(v),
  union: (parts) => parts.join(' | '),
}

interface NamedObject {
  name: string
  schema: Json
}

const singular = (word: string) => (word.endsWith('s') ? word.slice(0, -1) : word)

/** The type of `schema` in `d`; nested objects are named and collected into `out`. */
function typeIn(d: Dialect, schema: Json, name: string, out: NamedObject[]): string {
  if (Array.isArray(schema['enum'])) {
    const literals = (schema['enum'] as unknown[]).map(d.literal)
    return d === PY ? `Literal[${literals.join(', ')}]` : d.union(literals)
  }
  if (Array.isArray(schema['anyOf'])) return d.union((schema['anyOf'] as Json[]).map((s) => typeIn(d, s, name, out)))
  switch (schema['type']) {
    case 'string':
      return d.string
    case 'integer':
      return d.integer
    case 'boolean':
      return d.boolean
    case 'null':
      return d.null
    case 'array':
      return d.array(typeIn(d, schema['items'] as Json, singular(name), out))
    case 'object':
      out.push({ name, schema })
      return name
    default:
      return d === PY ? 'object' : 'unknown'
  }
}

/** Result type names of a tool, innermost first, with the schema of each. */
function resultObjects(d: Dialect, t: SurfaceTool): NamedObject[] {
  const out: NamedObject[] = []
  const top: NamedObject = { name: `${pascal(t.name)}Result`, schema: t.result_schema }
  for (const p of propertiesOf(t.result_schema)) typeIn(d, p.schema, `${pascal(t.name)}${pascal(p.name)}`, out)
  return [...out, top]
}

/** Parameters in positional call order, then the remaining input properties in schema order. */
function orderedParams(t: SurfaceTool) {
  const props = propertiesOf(t.input_schema)
  const byName = new Map(props.map((p) => [p.name, p]))
  const first = t.call.map((n) => byName.get(n)).filter((p) => p !== undefined)
  return [...first, ...props.filter((p) => !t.call.includes(p.name))]
}

function pyDefault(v: unknown): string {
  if (v === true) return 'True'
  if (v === false) return 'False'
  if (v === null) return 'None'
  return JSON.stringify(v)
}

const pyDoc = (s: string) => s.replace(/\\/g, '\\\\').replace(/"""/g, '\\"\\"\\"')

/** `generated/stubs/hands.pyi`: async Python signatures with TypedDict results. */
export function renderPythonStubs(surface: Surface): string {
  const blocks: string[] = []
  for (const t of surface.tools) {
    for (const o of resultObjects(PY, t)) {
      const fields = propertiesOf(o.schema).map((p) => `    ${p.name}: ${typeIn(PY, p.schema, `${o.name.replace(/Result$/, '')}${pascal(p.name)}`, [])}`)
      blocks.push(`class ${o.name}(TypedDict):\n${fields.join('\n')}`)
    }
    const params = orderedParams(t).map((p) => {
      const type = typeIn(PY, p.schema, pascal(p.name), [])
      if (p.isRequired) return `${p.name}: ${type}`
      const d = p.schema['default']
      return d === undefined ? `${p.name}: ${type} | None = None` : `${p.name}: ${type} = ${pyDefault(d)}`
    })
    blocks.push(`async def ${t.name}(${params.join(', ')}) -> ${pascal(t.name)}Result:\n    """${pyDoc(t.description)}"""\n    ...`)
  }
  const envelope = propertiesOf(surface.errors.envelope).map((p) => `    ${p.name}: ${typeIn(PY, p.schema, 'ErrorEnvelope', [])}`)
  return finish(
    [
      hashHeader(),
      '"""The hands tools as a Python code sandbox binds them: await each call."""',
      '',
      'from typing import Literal, TypedDict',
      '',
      '',
      blocks.join('\n\n\n'),
      '',
      '',
      `class ErrorEnvelope(TypedDict):\n${envelope.join('\n')}`,
    ].join('\n'),
  )
}

const IDENTIFIER_RESERVED = new Set(['delete'])

/** `generated/stubs/hands.d.ts`: the same for JavaScript code sandboxes. */
export function renderTypeScriptStubs(surface: Surface): string {
  const blocks: string[] = []
  const methods: string[] = []
  const exportsOf: string[] = []
  for (const t of surface.tools) {
    for (const o of resultObjects(TS, t)) {
      const fields = propertiesOf(o.schema).map((p) => `  ${p.name}: ${typeIn(TS, p.schema, `${o.name.replace(/Result$/, '')}${pascal(p.name)}`, [])}`)
      blocks.push(`export interface ${o.name} {\n${fields.join('\n')}\n}`)
    }
    const params = orderedParams(t).map((p) => `${p.name}${p.isRequired ? '' : '?'}: ${typeIn(TS, p.schema, pascal(p.name), [])}`)
    methods.push(`  /** ${t.description.replace(/\*\//g, '*\\/')} */\n  ${t.name}(${params.join(', ')}): Promise<${pascal(t.name)}Result>`)
    if (IDENTIFIER_RESERVED.has(t.name)) {
      exportsOf.push(`declare const _${t.name}: Hands['${t.name}']\nexport { _${t.name} as ${t.name} }`)
    } else {
      exportsOf.push(`export declare const ${t.name}: Hands['${t.name}']`)
    }
  }
  const envelope = propertiesOf(surface.errors.envelope).map((p) => `  ${p.name}: ${typeIn(TS, p.schema, 'ErrorEnvelope', [])}`)
  return finish(
    [
      slashHeader(),
      '/** The hands tools as a JavaScript code sandbox binds them: await each call. */',
      '',
      blocks.join('\n\n'),
      '',
      `export interface ErrorEnvelope {\n${envelope.join('\n')}\n}`,
      '',
      `export interface Hands {\n${methods.join('\n\n')}\n}`,
      '',
      'export declare const hands: Hands',
      '',
      exportsOf.join('\n'),
    ].join('\n'),
  )
}
