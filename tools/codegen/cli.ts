/**
 * `pnpm gen`            write generated/ (and packages/contracts/surface.json) from packages/contracts
 * `pnpm gen --check`    exit 1 with a unified diff when a generated file differs from what codegen renders
 * `pnpm gen --diff REF [--format text|md|json] [--exit-code]`
 *                       print every change a model or client would see since git REF's surface file;
 *                       with --exit-code, exit 1 when anything differs
 */
import { execFileSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { DIFF_FORMATS, SurfaceLoadError, diffSurfaces, formatDiff, parseSurface, type DiffFormat } from '@hands/surface/contract'
import type { Budget } from './render/budget.ts'
import { NO_CODE_TOOL_DIR, renderAll } from './files.ts'
import { OUT_OF_DATE, checkGenerated, writeGenerated } from './sync.ts'

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const USAGE = `usage: pnpm gen [--check | --diff REF [--format ${DIFF_FORMATS.join('|')}] [--exit-code]]`
// Where a commit keeps the surface: the shipped copy, or only generated/ in commits before it existed.
const SURFACE_PATHS = ['packages/contracts/surface.json', 'generated/surface.json']

function check(): number {
  const files = renderAll()
  const { drift, report } = checkGenerated(REPO, files)
  if (drift.length > 0) {
    process.stdout.write(report)
    console.error(`${OUT_OF_DATE} (${drift.length} file${drift.length === 1 ? '' : 's'} differ: ${drift.join(', ')})`)
    return 1
  }
  console.log(`generated/ is up to date (${files.length} files)`)
  return 0
}

function write(): number {
  const files = renderAll()
  const changed = writeGenerated(REPO, files)
  console.log(changed.length === 0 ? 'generated/ unchanged' : `wrote ${changed.join(', ')}`)
  const budgetOf = (dir: string) => JSON.parse(files.find((f) => f.path === `${dir}/budget.json`)?.text ?? '{}') as Budget
  const own = budgetOf('generated')
  const none = budgetOf(NO_CODE_TOOL_DIR)
  const noneOf = new Map(none.tools.map((t) => [t.name, t.tokens]))
  console.log(`\n${own.tools.length} tools, ${own.encoding} tokens each (name + description + input schema), code tool ${own.code_tool} / none:`)
  for (const t of own.tools) console.log(`  ${t.name.padEnd(18)} ${String(t.tokens).padStart(5)} ${String(noneOf.get(t.name)).padStart(5)}`)
  console.log(`  ${'total'.padEnd(18)} ${String(own.total.tokens).padStart(5)} ${String(none.total.tokens).padStart(5)}`)
  console.log(`  ${'prompt prose'.padEnd(18)} ${String(own.prompt.tokens).padStart(5)} ${String(none.prompt.tokens).padStart(5)}`)
  return 0
}

/** The surface file at git REF (in the current directory's repository), or the reason it cannot be read. */
function surfaceAt(ref: string): { text: string; path: string } | { error: string } {
  const errors: string[] = []
  for (const path of SURFACE_PATHS) {
    try {
      return { text: execFileSync('git', ['show', `${ref}:${path}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }), path }
    } catch (e) {
      errors.push((e as { stderr?: string }).stderr?.trim() ?? String(e))
    }
  }
  return { error: `cannot read ${SURFACE_PATHS.join(' or ')} at ${ref}: ${errors.join('; ')}` }
}

/** The surface at git REF against the one rendered from the contracts now. */
function diffAgainst(ref: string, format: DiffFormat, isExitCode: boolean): number {
  const old = surfaceAt(ref)
  if ('error' in old) {
    console.error(old.error)
    return 2
  }
  const rendered = renderAll().find((f) => f.path === 'packages/contracts/surface.json')
  if (rendered === undefined) throw new Error('codegen renders no surface.json')
  try {
    const diff = diffSurfaces(parseSurface(old.text, `${ref}:${old.path}`), parseSurface(rendered.text, 'the rendered surface'))
    console.log(formatDiff(diff, format, { before: ref, after: 'working tree' }))
    return isExitCode && diff.isChanged ? 1 : 0
  } catch (e) {
    if (!(e instanceof SurfaceLoadError)) throw e
    console.error(e.message)
    return 2
  }
}

function main(argv: string[]): number {
  let values: { check?: boolean; diff?: string; format?: string; 'exit-code'?: boolean; help?: boolean }
  try {
    ;({ values } = parseArgs({
      args: argv,
      options: {
        check: { type: 'boolean' },
        diff: { type: 'string' },
        format: { type: 'string' },
        'exit-code': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }))
  } catch (e) {
    console.error(`${(e as Error).message}; ${USAGE}`)
    return 2
  }
  if (values.help) {
    console.log(USAGE)
    return 0
  }
  if (values.diff !== undefined) {
    const format = values.format ?? 'text'
    if (values.check || values.diff.startsWith('-') || !(DIFF_FORMATS as readonly string[]).includes(format)) {
      console.error(`--diff takes one git ref, e.g. \`pnpm gen --diff main\`, and --format one of ${DIFF_FORMATS.join(', ')}; ${USAGE}`)
      return 2
    }
    return diffAgainst(values.diff, format as DiffFormat, values['exit-code'] === true)
  }
  if (values.format !== undefined || values['exit-code']) {
    console.error(`--format and --exit-code go with --diff REF; ${USAGE}`)
    return 2
  }
  return values.check ? check() : write()
}

process.exit(main(process.argv.slice(2)))
