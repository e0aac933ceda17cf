import type { Surface, SurfaceTool } from '../surface.ts'
import { propertiesOf, resultRows, typeText } from '../schema.ts'
import { finish, htmlHeader } from './header.ts'

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ')

function callShape(t: SurfaceTool): string {
  const props = propertiesOf(t.input_schema)
  const positional = t.call.join(', ')
  const named = props.filter((p) => !t.call.includes(p.name)).map((p) => `${p.name}=…`)
  return `${t.name}(${[positional, ...named].filter(Boolean).join(', ')})`
}

function renderTool(t: SurfaceTool): string {
  const input = propertiesOf(t.input_schema)
    .map((p) => {
      const d = p.schema['default']
      return `| \`${p.name}\` | ${cell(typeText(p.schema))} | ${p.isRequired ? 'yes' : 'no'} | ${d === undefined ? '' : `\`${JSON.stringify(d)}\``} | ${cell(String(p.schema['description'] ?? ''))} |`
    })
    .join('\n')
  const result = resultRows(t.result_schema)
    .map((r) => `| \`${r.key}\` | ${cell(r.type)} | ${cell(r.description)} |`)
    .join('\n')
  const annotations = Object.entries(t.annotations)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ')
  return [
    `## ${t.name}`,
    '',
    `**${t.title}** · toggle: ${t.toggle ?? 'none'}`,
    '',
    `> ${t.description}`,
    '',
    `Call: \`${callShape(t)}\``,
    '',
    '| input | type | required | default | description |',
    '|---|---|---|---|---|',
    input,
    '',
    '| result key | type | description |',
    '|---|---|---|',
    result,
    '',
    `Annotations: ${annotations}`,
  ].join('\n')
}

/** `generated/tools.md`: every description, input and result of the surface, for diff review. */
export function renderToolsMd(surface: Surface): string {
  const errors = surface.errors.codes
    .map((c) => `| \`${c.code}\` | ${c.is_retryable ? 'yes' : 'no'} | ${c.is_always_preflight ? 'yes' : 'no'} | ${cell(c.summary)} |`)
    .join('\n')
  return finish(
    [
      htmlHeader(),
      '# hands tools',
      '',
      `${surface.tools.length} tools: ${surface.tools.map((t) => `\`${t.name}\``).join(', ')}.`,
      '',
      ...surface.tools.map((t) => `${renderTool(t)}\n`),
      '## Errors',
      '',
      'Every failure is one envelope: `{tool, code, message, hint, is_preflight}`.',
      '',
      '| code | retry as is can succeed | always preflight | meaning |',
      '|---|---|---|---|',
      errors,
    ].join('\n'),
  )
}
