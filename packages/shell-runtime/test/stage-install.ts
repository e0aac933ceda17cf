import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  symlinkSync,
} from 'node:fs'
import { basename, dirname, join, sep } from 'node:path'

interface Manifest {
  name: string
  files?: string[]
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
  peerDependenciesMeta?: Record<string, { optional?: boolean }>
}

/**
 * Lay out workspace packages (by directory) in `into/node_modules` as an install would, each with
 * every package it may load at run time (its dependencies, the optional ones that are installed,
 * peers not marked optional), all of it readable by every user: a program run from `into` as
 * another user (setpriv to nobody) loads them there, where a checkout in a directory only its
 * owner may enter (/root, a 0700 mktemp -d) is out of its reach. A workspace package brings what
 * it publishes (package.json and `files`, `*` matching within one directory: dist/, the helper
 * under native/bin), any other package its whole directory. A file is a hard link where it is
 * already readable by all, else a copy made so.
 */
export function stageInstall(packages: string[], into: string): void {
  const top = join(into, 'node_modules')
  makeDir(top)
  /** Where each staged package lies, and the package directory it came from. */
  const placed = new Map<string, string>()
  const queue: Array<{ from: string; to: string }> = []
  for (const dir of packages) {
    const from = realpathSync(dir)
    const to = join(top, manifest(from).name)
    if (placed.has(to)) continue
    placed.set(to, from)
    queue.push({ from, to })
  }
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const { from, to } = next
    const pkg = manifest(from)
    const workspace = !from.split(sep).includes('node_modules')
    for (const entry of workspace ? published(from, pkg) : readdirSync(from).filter((e) => e !== 'node_modules')) {
      makeDir(dirname(join(to, entry)))
      copyTree(join(from, entry), join(to, entry))
    }
    const peers = Object.keys(pkg.peerDependencies ?? {}).filter((name) => pkg.peerDependenciesMeta?.[name]?.optional !== true)
    const wanted = [
      ...[...Object.keys(pkg.dependencies ?? {}), ...peers].map((name) => ({ name, required: true })),
      ...Object.keys(pkg.optionalDependencies ?? {}).map((name) => ({ name, required: false })),
    ]
    for (const { name, required } of wanted) {
      const source = resolveFrom(from, name)
      if (source === null) {
        if (required) throw new Error(`${pkg.name} depends on ${name}, which is not installed beside it (${from})`)
        continue
      }
      // Node finds the nearest copy up the staged tree: the one it needs, or a different one a nested copy must shadow.
      const nearest = lookupPath(to, into, name).find((d) => placed.has(d))
      if (nearest !== undefined && placed.get(nearest) === source) continue
      const dest = nearest === undefined ? join(top, name) : join(to, 'node_modules', name)
      placed.set(dest, source)
      queue.push({ from: source, to: dest })
    }
  }
}

function manifest(dir: string): Manifest {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest
}

/** The top-level entries a workspace package publishes: package.json and what `files` names (that exists). */
function published(dir: string, pkg: Manifest): string[] {
  const out = new Set(['package.json'])
  for (const pattern of pkg.files ?? []) {
    if (!pattern.includes('*')) {
      if (existsSync(join(dir, pattern))) out.add(pattern)
      continue
    }
    const parent = dirname(pattern)
    const match = new RegExp(`^${basename(pattern).split('*').map(escapeRegExp).join('[^/]*')}$`)
    for (const f of existsSync(join(dir, parent)) ? readdirSync(join(dir, parent)) : []) if (match.test(f)) out.add(join(parent, f))
  }
  return [...out]
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** The package directory `name` resolves to from package `dir` (a real path), as node looks it up; null when not installed. */
function resolveFrom(dir: string, name: string): string | null {
  for (let d = dir; ; d = dirname(d)) {
    const candidate = join(d, 'node_modules', name)
    if (basename(d) !== 'node_modules' && existsSync(join(candidate, 'package.json'))) return realpathSync(candidate)
    if (dirname(d) === d) return null
  }
}

/** Where node looks for `name` from the staged package at `at`, nearest first, up to `into`. */
function lookupPath(at: string, into: string, name: string): string[] {
  const out: string[] = []
  for (let d = at; d.startsWith(into); d = dirname(d)) if (basename(d) !== 'node_modules') out.push(join(d, 'node_modules', name))
  return out
}

/** `dir` and any parent it lacks, each a directory every user may enter and list, whatever the umask. */
function makeDir(dir: string): void {
  if (existsSync(dir)) return
  makeDir(dirname(dir))
  mkdirSync(dir)
  chmodSync(dir, 0o755)
}

/** Copy `from` to `to` (whose parent exists): directories made afresh, symbolic links as links, each file readable (and, if its owner may run it, runnable) by all. */
function copyTree(from: string, to: string): void {
  const st = lstatSync(from)
  if (st.isSymbolicLink()) {
    symlinkSync(readlinkSync(from), to)
  } else if (st.isDirectory()) {
    mkdirSync(to)
    chmodSync(to, 0o755)
    for (const entry of readdirSync(from)) copyTree(join(from, entry), join(to, entry))
  } else {
    const mode = (st.mode & 0o777) | 0o444 | (st.mode & 0o100 ? 0o111 : 0)
    if ((st.mode & 0o777) === mode) {
      try {
        linkSync(from, to)
        return
      } catch {
        // another file system, or not ours to link: copy it
      }
    }
    copyFileSync(from, to)
    chmodSync(to, mode)
  }
}
