import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

const REPO = join(import.meta.dirname, '..', '..', '..')
/** The packages the `hands` bin loads, each built to its own dist/. */
const PACKAGES = ['contracts', 'fs-runtime', 'shell-runtime', 'surface']

/** The newest modification time of a file under `dir`. */
function newest(dir: string): number {
  let at = 0
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) at = Math.max(at, statSync(join(entry.parentPath, entry.name)).mtimeMs)
  }
  return at
}

/** Packages whose dist/ is missing or older than a file of their src/. */
function stale(): string[] {
  return PACKAGES.filter((name) => {
    const dir = join(REPO, 'packages', name)
    const built = join(dir, 'dist', 'index.js')
    return !existsSync(built) || newest(join(dir, 'src')) > statSync(built).mtimeMs
  })
}

/**
 * The tests that start `hands` run the built bin (test/helpers/cli.ts). Under `pnpm test` turbo
 * has built it first; a package-level `vitest run` after an edit builds it here (turbo's cache
 * makes an unchanged package free), so no test runs yesterday's dist/.
 */
export default function setup(): void {
  const old = stale()
  if (old.length === 0) return
  console.log(`building dist/ (older than src/ in ${old.join(', ')})`)
  const r = spawnSync('pnpm', ['--dir', REPO, 'build'], { stdio: ['ignore', 'ignore', 'inherit'] })
  if (r.status !== 0) throw new Error(`pnpm build failed (exit ${r.status}); the tests that start hands need dist/`)
  const still = stale()
  if (still.length > 0) throw new Error(`dist/ is still older than src/ after pnpm build in ${still.join(', ')}`)
}
