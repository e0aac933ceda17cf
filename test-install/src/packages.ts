import { execFileSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'

export const REPO = join(import.meta.dirname, '..', '..')

/** The five published packages, in dependency order. */
export const PUBLISHED = ['contracts', 'sandbox', 'fs-runtime', 'shell-runtime', 'surface'] as const

/** Tarball paths by package directory. */
export type Tarballs = Record<(typeof PUBLISHED)[number], string>

/** `pnpm pack` each published package (built beforehand by turbo's `^build`) into `dir`; the tarball paths by package directory. */
export function packAll(dir: string): Tarballs {
  const out = {} as Tarballs
  for (const name of PUBLISHED) {
    const before = new Set(readdirSync(dir))
    execFileSync('pnpm', ['pack', '--pack-destination', dir], { cwd: join(REPO, 'packages', name), stdio: ['ignore', 'ignore', 'inherit'] })
    const made = readdirSync(dir).filter((f) => f.endsWith('.tgz') && !before.has(f))
    if (made.length !== 1) throw new Error(`pnpm pack in packages/${name} made ${made.length} tarballs`)
    out[name] = join(dir, made[0] as string)
  }
  return out
}

/** Files in a tarball (paths without the `package/` prefix). */
export function tarballFiles(tarball: string): string[] {
  return execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.replace(/^package\//, ''))
}

/** The package.json inside a tarball. */
export function tarballManifest(tarball: string): Record<string, unknown> {
  return JSON.parse(execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' })) as Record<string, unknown>
}

/** Unpack a tarball into `dir` (its files land in `dir/package`); the package root. */
export function unpack(tarball: string, dir: string): string {
  execFileSync('tar', ['-xzf', tarball, '-C', dir])
  return join(dir, 'package')
}
