import { stat } from 'node:fs/promises'
import { consultGates, isWithin, resolveInside, type PathGate } from '@hands/fs-runtime'
import { openHeldDir as openDir, releaseCwd, type HeldCwd } from '@hands/sandbox/parts'
import { refuse } from '../errors.ts'

async function checkedPath(roots: readonly string[], given: string, gates: readonly PathGate[], tool: string): Promise<string> {
  const real = await resolveInside(roots, given, { gates, access: 'cwd', tool, label: 'cwd' })
  let isDir: boolean
  try {
    isDir = (await stat(real)).isDirectory()
  } catch {
    throw refuse('not_found', `cwd \`${given}\` does not exist.`, 'Give an existing directory under an allowed root, or omit `cwd` for the workspace root.')
  }
  if (!isDir) {
    throw refuse('not_a_directory', `cwd \`${given}\` is not a directory.`, 'Give a directory under an allowed root, or omit `cwd` for the workspace root.')
  }
  return real
}

/**
 * Check `cwd` (default the workspace root, the first root; relative to it) against the real
 * roots and the host's gates, and hold the directory open. The fast path opens the path and
 * checks the directory it got; anything unusual goes through fs-runtime's resolveInside for the
 * exact refusal, then opens that real path and requires the same directory back.
 */
export async function holdCwd(roots: readonly string[], cwd: string | undefined, gates: readonly PathGate[], tool: string): Promise<HeldCwd> {
  const given = cwd ?? (roots[0] as string)
  if (!given.includes('\0') && given !== '') {
    const opened = openDir(given.startsWith('/') ? given : `${roots[0]}/${given}`)
    if (typeof opened !== 'string') {
      if (roots.some((r) => isWithin(r, opened.real)) && (await consultGates(gates, opened.real, 'cwd', tool)) === 'allow') return opened
      releaseCwd(opened)
    }
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    const real = await checkedPath(roots, given, gates, tool)
    const opened = openDir(real)
    if (opened === 'no-proc') {
      // /proc cannot name the descriptor: start by the checked path.
      const st = await stat(real)
      return { real, fd: null, dev: st.dev, ino: st.ino }
    }
    if (opened === 'missing') continue
    if (opened.real === real) return opened
    releaseCwd(opened)
  }
  throw refuse('io_error', `cwd \`${given}\` kept changing while it was checked.`, 'Another process is renaming or relinking it; retry once it is stable.')
}

/** Hold `cwd` (as {@link holdCwd} checks it) while `use` runs — the spawns happen inside — then release it. */
export async function withHeldCwd<T>(
  roots: readonly string[],
  cwd: string | undefined,
  gates: readonly PathGate[],
  tool: string,
  use: (held: HeldCwd) => Promise<T>,
): Promise<T> {
  const held = await holdCwd(roots, cwd, gates, tool)
  try {
    return await use(held)
  } finally {
    releaseCwd(held)
  }
}
