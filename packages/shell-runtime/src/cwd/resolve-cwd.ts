import { stat } from 'node:fs/promises'
import { resolveInside, type PathGate } from '@hands/fs-runtime'
import { refuse } from '../errors.ts'

/**
 * The real absolute directory a command runs in: `cwd` (default the workspace root, the first
 * root) confined to the roots and the host's gates by fs-runtime, then checked to be an existing
 * directory.
 */
export async function resolveCwd(roots: readonly string[], cwd: string | undefined, gates: readonly PathGate[] | undefined, tool: string): Promise<string> {
  const given = cwd ?? (roots[0] as string)
  const real = await resolveInside(roots, given, { gates: gates ?? [], access: 'cwd', tool, label: 'cwd' })
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
