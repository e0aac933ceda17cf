import { fileExists as contract, FILE_EXISTS, ToolError, type FileExistsInput, type FileExistsResult } from '@hands/contracts'
import { resolvePath, type ParentCache } from '../confine/resolve.ts'
import type { Context } from '../runtime/context.ts'
import { gateOf } from '../runtime/guard.ts'
import { checkToolInput } from '../runtime/input.ts'

async function existsOne(ctx: Context, given: string, label: string, cache: ParentCache): Promise<boolean> {
  let r
  try {
    r = await resolvePath(ctx.roots, given, { final: 'nofollow', label, cache })
  } catch (cause) {
    // A file used as a directory, or a symlink loop: nothing is there by that name.
    if (cause instanceof ToolError && (cause.code === 'not_a_directory' || cause.code === 'not_found')) return false
    throw cause
  }
  if (r.stats === null) return false
  return (await gateOf(ctx, r, 'read', FILE_EXISTS)) === 'allow'
}

/**
 * file_exists: whether each path exists, by lstat (a symlink counts as itself, dangling or
 * not); content is never read. A path outside the roots refuses the whole call; a path a gate
 * hides answers false.
 */
export async function fileExists(ctx: Context, input: FileExistsInput): Promise<FileExistsResult> {
  const { paths } = checkToolInput<FileExistsInput>(contract, input)
  const cache: ParentCache = new Map()
  const answers = await Promise.all(paths.map((given, i) => existsOne(ctx, given, `paths[${i}]`, cache)))
  return { paths: paths.map((path, i) => ({ path, is_exists: answers[i] === true })) }
}
