import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'

const REPO = join(import.meta.dirname, '..', '..', '..')
const BIN = join(import.meta.dirname, '..', 'dist', 'cli', 'main.js')

/**
 * The tests that start `hands` run the built bin (test/helpers/cli.ts). Under `pnpm test` turbo
 * has built it first (`@hands/surface#test` depends on the build in turbo.json; turbo sets
 * TURBO_HASH in its tasks). Run any other way, this builds it here: `pnpm build` is turbo, which
 * rebuilds a package whose sources changed and restores an unchanged one from its cache, so no
 * test runs a dist/ older than src/.
 */
export default function setup(): void {
  if (process.env['TURBO_HASH'] !== undefined && existsSync(BIN)) return
  const r = spawnSync('pnpm', ['--dir', REPO, 'build'], { stdio: ['ignore', 'ignore', 'inherit'] })
  if (r.status !== 0) throw new Error(`pnpm build failed (exit ${r.status}); the tests that start hands need dist/`)
  if (!existsSync(BIN)) throw new Error(`pnpm build did not make ${BIN}`)
}
