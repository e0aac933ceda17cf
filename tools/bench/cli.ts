/**
 * `pnpm bench [name ...]` runs every `tools/bench/*.bench.ts` (or those whose name contains a
 * given word), each in its own process so one benchmark's memory cannot colour another's.
 * Each benchmark prints its own figures as ratios to a baseline measured in the same run.
 */
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const filters = process.argv.slice(2).filter((a) => !a.startsWith('-'))
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => filters.length === 0 || filters.some((w) => f.includes(w)))
  .sort()

if (files.length === 0) {
  console.error(
    `no benchmark matches ${filters.join(' ') || '(any)'}; have: ${readdirSync(here)
      .filter((f) => f.endsWith('.bench.ts'))
      .join(', ')}`,
  )
  process.exit(1)
}
let failed = 0
for (const f of files) {
  console.log(`\n## ${f.replace(/\.bench\.ts$/, '')}\n`)
  const r = spawnSync(process.execPath, ['--conditions=hands-source', '--import', 'tsx', join(here, f)], {
    stdio: 'inherit',
    env: process.env,
  })
  if (r.status !== 0) failed++
}
process.exit(failed === 0 ? 0 : 1)
