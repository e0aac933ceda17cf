import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import type { Surface } from './surface.ts'

/** The package that ships the surface file, and the file's name in it. */
export const CONTRACTS_PACKAGE = '@hands/contracts'
export const SURFACE_FILE = 'surface.json'

/** A surface and what to call it in the output. */
export interface LoadedSurface {
  surface: Surface
  label: string
}

/** A source that cannot be read as a surface; the message says what was tried. */
export class SurfaceLoadError extends Error {}

const SOURCES = `a surface file (.json), a ${CONTRACTS_PACKAGE} package directory, a project directory with node_modules/${CONTRACTS_PACKAGE}, a hands checkout, a package tarball (.tgz), or an npm spec (1.2.0, ${CONTRACTS_PACKAGE}@next, file:…)`

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

function isSurfaceTool(t: unknown): boolean {
  return (
    isObject(t) &&
    typeof t['name'] === 'string' &&
    typeof t['title'] === 'string' &&
    typeof t['description'] === 'string' &&
    isObject(t['input_schema']) &&
    isObject(t['result_schema']) &&
    Array.isArray(t['call']) &&
    isObject(t['annotations'])
  )
}

/** Parse and shape-check a surface file's text. */
export function parseSurface(text: string, where: string): Surface {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (e) {
    throw new SurfaceLoadError(`${where} is not JSON: ${(e as Error).message}`)
  }
  const errors = isObject(value) ? value['errors'] : undefined
  if (
    !isObject(value) ||
    !Array.isArray(value['tools']) ||
    !value['tools'].every(isSurfaceTool) ||
    !isObject(errors) ||
    !Array.isArray(errors['codes']) ||
    !isObject(errors['envelope'])
  ) {
    throw new SurfaceLoadError(
      `${where} is not a hands surface file: it needs "tools" (each with name, title, description, input_schema, result_schema, call, annotations) and "errors" ({codes, envelope})`,
    )
  }
  return value as unknown as Surface
}

function readPackage(dir: string): { name: string; version: string } | null {
  try {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown }
    return typeof pkg.name === 'string' ? { name: pkg.name, version: typeof pkg.version === 'string' ? pkg.version : '?' } : null
  } catch {
    return null
  }
}

/** The surface in a package directory of @hands/contracts. */
function fromPackageDir(dir: string, shown: string): LoadedSurface {
  const pkg = readPackage(dir)
  const file = join(dir, SURFACE_FILE)
  if (!existsSync(file)) {
    throw new SurfaceLoadError(
      `${shown} (${CONTRACTS_PACKAGE}@${pkg?.version ?? '?'}) has no ${SURFACE_FILE}: versions before the contract diff do not ship one`,
    )
  }
  return { surface: parseSurface(readFileSync(file, 'utf8'), `${shown}/${SURFACE_FILE}`), label: `${CONTRACTS_PACKAGE}@${pkg?.version ?? '?'} (${shown})` }
}

function fromDirectory(dir: string, shown: string): LoadedSurface {
  if (readPackage(dir)?.name === CONTRACTS_PACKAGE) return fromPackageDir(dir, shown)
  const installed = join(dir, 'node_modules', ...CONTRACTS_PACKAGE.split('/'))
  if (readPackage(installed)?.name === CONTRACTS_PACKAGE) return fromPackageDir(installed, `${shown}/node_modules/${CONTRACTS_PACKAGE}`)
  const checkout = join(dir, 'packages', 'contracts')
  if (readPackage(checkout)?.name === CONTRACTS_PACKAGE) return fromPackageDir(checkout, `${shown}/packages/contracts`)
  throw new SurfaceLoadError(
    `${shown} is a directory without ${CONTRACTS_PACKAGE} (no package.json of it there, in node_modules/${CONTRACTS_PACKAGE} or in packages/contracts); give ${SOURCES}`,
  )
}

/** Unpack a package tarball into a temp directory, read its surface, remove the directory. */
function fromTarball(file: string, shown: string): LoadedSurface {
  const dir = mkdtempSync(join(tmpdir(), 'hands-contract-'))
  try {
    try {
      execFileSync('tar', ['-xf', file, '-C', dir], { stdio: ['ignore', 'ignore', 'pipe'] })
    } catch (e) {
      throw new SurfaceLoadError(`cannot unpack ${shown} with tar: ${String((e as { stderr?: Buffer }).stderr ?? e).trim()}`)
    }
    const root = join(dir, 'package')
    if (readPackage(root)?.name !== CONTRACTS_PACKAGE)
      throw new SurfaceLoadError(`${shown} is not a ${CONTRACTS_PACKAGE} tarball (no package/package.json naming it)`)
    return fromPackageDir(root, shown)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Fetch a package with `npm pack` (from the registry npm is configured for) and read its surface. */
function fromSpec(spec: string, cwd: string): LoadedSurface {
  const dir = mkdtempSync(join(tmpdir(), 'hands-contract-pack-'))
  try {
    let out: string
    try {
      out = execFileSync('npm', ['pack', spec, '--pack-destination', dir, '--json', '--ignore-scripts'], {
        cwd,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    } catch (e) {
      const stderr = String((e as { stderr?: string }).stderr ?? e)
        .trim()
        .split('\n')
        .slice(-3)
        .join(' ')
      throw new SurfaceLoadError(`npm pack ${spec} failed: ${stderr}`)
    }
    const [packed] = JSON.parse(out) as Array<{ filename: string }>
    if (packed === undefined) throw new SurfaceLoadError(`npm pack ${spec} produced no tarball`)
    return fromTarball(join(dir, packed.filename), spec)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * Read a surface from `source`: a surface file (.json), a directory (an @hands/contracts package,
 * a project with it in node_modules, or a hands checkout), a tarball (.tgz, .tar), or an npm spec
 * (a bare version, range or dist-tag means @hands/contracts at it).
 */
export function loadSurface(source: string, cwd: string = process.cwd()): LoadedSurface {
  const path = resolve(cwd, source)
  if (existsSync(path)) {
    if (statSync(path).isDirectory()) return fromDirectory(path, source)
    if (/\.(tgz|tar\.gz|tar)$/.test(path)) return fromTarball(path, source)
    return { surface: parseSurface(readFileSync(path, 'utf8'), source), label: source }
  }
  const isSpecWithScheme = /^[a-z][a-z0-9+.-]*:/i.test(source)
  if (!isSpecWithScheme && (/^[./~]/.test(source) || /\.(json|tgz|tar\.gz|tar)$/.test(source)))
    throw new SurfaceLoadError(`${source}: no such file or directory; give ${SOURCES}`)
  const spec = source.includes('@') || isSpecWithScheme ? source : `${CONTRACTS_PACKAGE}@${source}`
  return fromSpec(spec, cwd)
}

/** The surface of the @hands/contracts this hands was installed with. */
export function ownSurface(): LoadedSurface {
  const file = createRequire(import.meta.url).resolve(`${CONTRACTS_PACKAGE}/${SURFACE_FILE}`)
  const pkg = readPackage(dirname(file))
  return { surface: parseSurface(readFileSync(file, 'utf8'), file), label: `${CONTRACTS_PACKAGE}@${pkg?.version ?? '?'} (this hands)` }
}
