import { ToolError } from '@hands/contracts'
import { linkOutside, OutsideRoots, type Named } from '../errors/refuse.ts'
import { resolvePath } from './resolve.ts'

/**
 * Require that a symlink with `text`, placed in the directory `dirReal`, resolves inside the
 * roots (every existing component followed; a missing rest appended). Any failure to resolve
 * refuses too: a symlink is copied only when its target provably stays inside.
 */
export async function requireLinkInside(roots: readonly string[], dirReal: string, text: string, n: Named): Promise<void> {
  const abs = text.startsWith('/') ? text : `${dirReal === '/' ? '' : dirReal}/${text}`
  try {
    await resolvePath(roots, abs, { final: 'follow', label: n.label })
  } catch (cause) {
    if (cause instanceof OutsideRoots) throw linkOutside(n, cause.paths[0]?.left, roots)
    if (cause instanceof ToolError) {
      throw new ToolError({
        code: cause.code,
        message: `${n.label} ${JSON.stringify(n.given)} is a symlink to ${JSON.stringify(text)}, which does not resolve: ${cause.message}`,
        hint: cause.hint,
        is_preflight: true,
      })
    }
    throw cause
  }
}
