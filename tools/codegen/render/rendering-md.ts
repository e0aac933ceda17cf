import type { Surface } from '../surface.ts'
import { finish, htmlHeader } from './header.ts'

/** A fence longer than any run of backticks in `lines`. */
const fence = (lines: readonly string[]) => '`'.repeat(Math.max(3, ...lines.flatMap((l) => [...l.matchAll(/`+/g)].map((m) => m[0].length + 1))))

/** `generated/rendering.md`: each tool's fixed examples as the model reads them back, for review. */
export function renderRenderingMd(surface: Surface): string {
  const sections = Object.entries(surface.rendering ?? {}).map(([tool, examples]) =>
    [
      `## ${tool}`,
      '',
      ...examples.flatMap((e) => {
        const f = fence(e.lines)
        return [`${e.example}:`, '', `${f}text`, ...e.lines, f, '']
      }),
    ].join('\n'),
  )
  return finish(
    [
      htmlHeader(),
      '# Rendered results, errors and confirmations',
      '',
      'The text hands renders for fixed example results, errors and confirmations of each tool (examples in `packages/surface/src/contract/examples.ts`): what a model reads back, and what a person confirming a destructive call reads. The contract diff compares it line by line.',
      '',
      ...sections,
    ].join('\n'),
  )
}
