import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build, type Plugin } from 'esbuild'
import type { TestProject } from 'vitest/node'

const PACKAGE = join(import.meta.dirname, '..')
const REPO = join(PACKAGE, '..', '..')
const DIST = join(PACKAGE, 'dist', 'index.js')
const SOURCE = join(PACKAGE, 'src', 'index.ts')
const FIXTURES = join(import.meta.dirname, 'fixtures')

declare module 'vitest' {
  export interface ProvidedContext {
    /** The directory holding the host fixtures built to plain JavaScript (`<name>.mjs`). */
    hostFixtures: string
  }
}

/** The package's entry, imported by the host fixtures, stays an import, of the built dist/index.js. */
const entryFromDist: Plugin = {
  name: 'entry-from-dist',
  setup(b) {
    b.onResolve({ filter: /\/src\/index\.ts$/ }, (args) => (join(args.resolveDir, args.path) === SOURCE ? { path: DIST, external: true } : undefined))
  },
}

/**
 * The host fixtures (test/fixtures/*.ts: a process that owns a shell runtime, killed or run as
 * another user by a test) run on plain node, as a user's program would: each is bundled once here,
 * its import of the package left pointing at the built dist/. Through tsx, each start cost about
 * 2 s of CPU more, and the tests start them ~40 times. Under `pnpm test` turbo has built the
 * package first (`@hands/shell-runtime#test` depends on it; turbo sets TURBO_HASH); run any other
 * way, this builds it (turbo rebuilds a package whose sources changed, restores it otherwise).
 */
export default async function setup(project: TestProject): Promise<() => void> {
  if (process.env['TURBO_HASH'] === undefined || !existsSync(DIST)) {
    const r = spawnSync('pnpm', ['--dir', REPO, 'build'], { stdio: ['ignore', 'ignore', 'inherit'] })
    if (r.status !== 0) throw new Error(`pnpm build failed (exit ${r.status}); the host fixtures run the built dist/`)
  }
  const out = mkdtempSync(join(tmpdir(), 'hands-host-fixtures-'))
  // Some hosts run as nobody (setpriv), so the directory is theirs to read.
  chmodSync(out, 0o755)
  await build({
    entryPoints: readdirSync(FIXTURES)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join(FIXTURES, f)),
    outdir: out,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'error',
    plugins: [entryFromDist],
  })
  project.provide('hostFixtures', out)
  return () => rmSync(out, { recursive: true, force: true })
}
