import { assertInput, createDirectory as contract, CREATE_DIRECTORY, type CreateDirectoryInput, type CreateDirectoryResult } from '@hands/contracts'
import { checkEach } from '../confine/each.ts'
import { resolvePath, type ParentCache, type Resolved } from '../confine/resolve.ts'
import { afterChanges, notADirectory } from '../errors/refuse.ts'
import { makeDirs, pinDir } from '../handle/dir.ts'
import type { Context } from '../runtime/context.ts'
import { gateWrite } from '../runtime/guard.ts'

/** Resolve one path for creation: a final symlink must lead to a directory (or refuse). */
async function plan(ctx: Context, given: string, label: string, cache: ParentCache): Promise<Resolved> {
  const named = await resolvePath(ctx.roots, given, { final: 'nofollow', label, cache })
  let r = named
  if (named.stats?.isSymbolicLink() === true) {
    r = await resolvePath(ctx.roots, given, { final: 'follow', label })
    if (r.stats === null)
      throw notADirectory(named, `it is a symlink to ${r.real}, which does not exist; create_directory does not create through a dangling symlink`)
  }
  if (r.stats !== null && !r.stats.isDirectory()) throw notADirectory(named, `${r.real} exists and is not a directory`)
  await gateWrite(ctx, r, 'write', CREATE_DIRECTORY)
  return r
}

/**
 * create_directory: make each directory with any missing parents, in input order, after the
 * whole batch passed its checks. An existing directory (or a symlink to one inside the roots)
 * gives is_created false; anything else already there is refused with not_a_directory.
 */
export async function createDirectory(ctx: Context, input: CreateDirectoryInput): Promise<CreateDirectoryResult> {
  const { paths } = assertInput(contract, input)
  const cache: ParentCache = new Map()
  // Every path is checked, so a refusal names each one outside the roots.
  const plans = await checkEach(ctx.roots, paths, (given, i) => plan(ctx, given, `paths[${i}]`, cache))
  const out: CreateDirectoryResult['paths'] = []
  const made: string[] = []
  for (const r of plans) {
    if (r.stats !== null) {
      out.push({ path: r.given, is_created: false })
      continue
    }
    try {
      const anchor = await pinDir(r.anchor, r, true)
      try {
        const { dir, created } = await makeDirs(anchor, [...r.missing, r.name], r)
        if (dir !== anchor) await dir.close()
        made.push(...created)
        out.push({ path: r.given, is_created: created.includes(r.real) })
      } finally {
        await anchor.close()
      }
    } catch (cause) {
      throw made.length > 0 ? afterChanges(cause, `Created before the failure: ${made.join(', ')}.`) : cause
    }
  }
  return { paths: out }
}
