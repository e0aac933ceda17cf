import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build, type Plugin } from 'esbuild'
import type { TestProject } from 'vitest/node'
import { stageInstall } from './stage-install.ts'

const PACKAGE = join(import.meta.dirname, '..')
const REPO = join(PACKAGE, '..', '..')
const DIST = join(PACKAGE, 'dist', 'index.js')
const SOURCE = join(PACKAGE, 'src', 'index.ts')
const FIXTURES = join(import.meta.dirname, 'fixtures')

declare module 'vitest' {
  export interface ProvidedContext {
    /**
     * The directory, readable by every user, holding the host fixtures built to plain JavaScript
     * (`<name>.mjs`) and, in `node_modules/`, the built package they import with what it loads.
     */
    hostFixtures: string
  }
}

/** The package's entry, imported by the host fixtures, stays an import, of the package by name. */
const entryAsPackage: Plugin = {
  name: 'entry-as-package',
  setup(b) {
    b.onResolve({ filter: /\/src\/index\.ts$/ }, (args) =>
      join(args.resolveDir, args.path) === SOURCE ? { path: '@hands/shell-runtime', external: true } : undefined,
    )
  },
}

/**
 * The host fixtures (test/fixtures/*.ts: a process that owns a shell runtime, killed or run as
 * another user by a test) run on plain node, as a user's program would: each is bundled once here,
 * its import of the package left an import of `@hands/shell-runtime`, installed beside it as its
 * build (dist/, the helper in native/bin, the packages they load, node-pty among them). All of it
 * lies in a temporary directory every user may read: a host run as nobody (setpriv) cannot reach
 * into a checkout under /root or a 0700 directory. Through tsx, each start cost about 2 s of CPU
 * more, and the tests start them ~40 times. Under `pnpm test` turbo has built the package first
 * (`@hands/shell-runtime#test` depends on it; turbo sets TURBO_HASH); run any other way, this
 * builds it (turbo rebuilds a package whose sources changed, restores it otherwise).
 */
export default async function setup(project: TestProject): Promise<() => void> {
  if (process.env['TURBO_HASH'] === undefined || !existsSync(DIST)) {
    const r = spawnSync('pnpm', ['--dir', REPO, 'build'], { stdio: ['ignore', 'ignore', 'inherit'] })
    if (r.status !== 0) throw new Error(`pnpm build failed (exit ${r.status}); the host fixtures run the built dist/`)
  }
  const out = mkdtempSync(join(tmpdir(), 'hands-host-fixtures-'))
  chmodSync(out, 0o755)
  try {
    stageInstall([PACKAGE], out)
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
      plugins: [entryAsPackage],
    })
    // esbuild writes under the umask: a 077 one would keep the fixtures from nobody.
    for (const f of readdirSync(out)) if (f.endsWith('.mjs')) chmodSync(join(out, f), 0o644)
  } catch (err) {
    rmSync(out, { recursive: true, force: true })
    throw err
  }
  project.provide('hostFixtures', out)
  return () => rmSync(out, { recursive: true, force: true })
}
