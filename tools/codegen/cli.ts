/**
 * `pnpm gen`            write generated/ from packages/contracts
 * `pnpm gen --check`    exit 1 with a unified diff when generated/ differs from what codegen renders
 * `pnpm gen --diff REF` print how the surface changed since git REF's generated/surface.json
 */
import { execFileSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { diffSurfaces } from './diff.ts'
import type { Budget } from './render/budget.ts'
import { renderAll } from './files.ts'
import type { Surface } from './surface.ts'
import { OUT_OF_DATE, checkGenerated, writeGenerated } from './sync.ts'

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const USAGE = 'usage: pnpm gen [--check | --diff REF]'

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
  const budget = JSON.parse(files.find((f) => f.path === 'generated/budget.json')?.text ?? '{}') as Budget
  console.log(`\n${budget.tools.length} tools, ${budget.encoding} tokens each (name + description + input schema):`)
  for (const t of budget.tools) console.log(`  ${t.name.padEnd(18)} ${String(t.tokens).padStart(5)}`)
  console.log(`  ${'total'.padEnd(18)} ${String(budget.total.tokens).padStart(5)}`)
  return 0
}

/** The surface at git REF (read in the current directory's repository) against the one rendered now. */
function diffAgainst(ref: string): number {
  let text: string
  try {
    text = execFileSync('git', ['show', `${ref}:generated/surface.json`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (e) {
    const stderr = (e as { stderr?: string }).stderr?.trim() ?? String(e)
    console.error(`cannot read generated/surface.json at ${ref}: ${stderr}`)
    return 2
  }
  const surfaceFile = renderAll().find((f) => f.path === 'generated/surface.json')
  if (surfaceFile === undefined) throw new Error('codegen renders no surface.json')
  console.log(diffSurfaces(JSON.parse(text) as Surface, JSON.parse(surfaceFile.text) as Surface))
  return 0
}

function main(argv: string[]): number {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE)
    return 0
  }
  const d = argv.indexOf('--diff')
  if (d >= 0) {
    const ref = argv[d + 1]
    if (ref === undefined || ref.startsWith('-') || argv.length !== 2) {
      console.error(`--diff takes one git ref, e.g. \`pnpm gen --diff main\`; ${USAGE}`)
      return 2
    }
    return diffAgainst(ref)
  }
  const unknown = argv.filter((a) => a !== '--check')
  if (unknown.length > 0) {
    console.error(`unknown argument ${unknown.join(' ')}; ${USAGE}`)
    return 2
  }
  return argv.includes('--check') ? check() : write()
}

process.exit(main(process.argv.slice(2)))
