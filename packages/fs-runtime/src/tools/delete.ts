import { errno, lstat, unlink } from '../util/fsio.ts'
import { assertInput, deleteTool as contract, DELETE, ToolError, type DeleteInput, type DeleteResult } from '@hands/contracts'
import { checkEach } from '../confine/each.ts'
import { resolvePath, type ParentCache, type Resolved } from '../confine/resolve.ts'
import { isWithin } from '../confine/roots.ts'
import { afterChanges, changedUnderfoot, ioError } from '../errors/refuse.ts'
import { pinDir } from '../handle/dir.ts'
import { listTree } from '../tree/list.ts'
import { removeTree } from '../tree/remove.ts'
import { confirmOrRefuse } from '../runtime/confirm.ts'
import type { Context } from '../runtime/context.ts'
import { gateOf, protectedRefusal, refuseSlashedLink, sameObject } from '../runtime/guard.ts'

/** A checked path: `r.stats` null means nothing (visible) is there to delete. */
interface Plan {
  r: Resolved | null
  given: string
}

/** Resolve one path: null when nothing is there by that name (a file used as a directory, a symlink loop). */
async function locate(ctx: Context, given: string, label: string, cache: ParentCache): Promise<Resolved | null> {
  await refuseSlashedLink(ctx, { label, given }, DELETE)
  try {
    return await resolvePath(ctx.roots, given, { final: 'nofollow', label, cache })
  } catch (cause) {
    if (cause instanceof ToolError && (cause.code === 'not_a_directory' || cause.code === 'not_found')) return null
    throw cause
  }
}

async function plan(ctx: Context, r: Resolved | null, given: string): Promise<Plan> {
  if (r === null) return { r: null, given }
  const refusal = protectedRefusal(ctx, r)
  if (refusal !== undefined) throw refusal
  if (r.stats === null) return { r, given }
  if ((await gateOf(ctx, r, 'delete', DELETE)) === 'hide') return { r: null, given }
  if (r.stats.isDirectory() && ctx.gates !== undefined && ctx.gates.length > 0) {
    // Every entry inside must pass the gates too; a protected one refuses the whole call.
    const dir = await pinDir(r.real, r, true)
    try {
      await listTree(dir, { n: r, isReadingLinks: false, gates: ctx.gates, access: 'delete', tool: DELETE, onHide: 'refuse' })
    } finally {
      await dir.close()
    }
  }
  return { r, given }
}

/** Remove one checked path; false when it was already gone. */
async function removeOne(r: Resolved, preflight: boolean, helper: string | null): Promise<boolean> {
  const before = r.stats
  if (before === null) return false
  const parent = await pinDir(r.parent, r, preflight)
  try {
    let now
    try {
      now = await lstat(parent.at(r.name))
    } catch (cause) {
      if (errno(cause) === 'ENOENT') return false
      throw ioError(r, cause, { preflight })
    }
    if (!sameObject(before, now)) throw changedUnderfoot(r, `${r.real} was replaced by another file`, preflight)
    try {
      if (now.isDirectory()) await removeTree(parent.ref, r.name, helper)
      else await unlink(parent.at(r.name))
    } catch (cause) {
      if (errno(cause) === 'ENOENT' && !now.isDirectory()) return false
      throw ioError(r, cause, { preflight: false, state: now.isDirectory() ? `Part of ${r.real} may already be removed.` : undefined })
    }
    return true
  } finally {
    await parent.close()
  }
}

/**
 * delete: remove each path (directories with everything under them), in input order, after the
 * whole batch passed its checks and the host confirmed. A final symlink is removed itself,
 * never its target. A missing path gives is_deleted false. An allowed root, or a path holding
 * one, is refused with protected_path.
 */
export async function deletePaths(ctx: Context, input: DeleteInput): Promise<DeleteResult> {
  const { paths } = assertInput(contract, input)
  const cache: ParentCache = new Map()
  // Every path is resolved first, so a refusal names each one outside the roots.
  const located = await checkEach(ctx.roots, paths, (given, i) => locate(ctx, given, `paths[${i}]`, cache))
  const plans: Plan[] = []
  for (const [i, r] of located.entries()) plans.push(await plan(ctx, r, paths[i] as string))
  const doomed = plans.filter((p) => p.r?.stats != null)
  await confirmOrRefuse(
    ctx,
    DELETE,
    'delete',
    doomed.map((p) => p.r as Resolved),
    doomed.map((p) => p.given),
  )
  const out: DeleteResult['paths'] = []
  const removed: string[] = []
  for (const p of plans) {
    const r = p.r
    // Missing, hidden, or already removed with an ancestor earlier in this batch.
    if (r === null || r.stats === null || removed.some((gone) => isWithin(gone, r.real))) {
      out.push({ path: p.given, is_deleted: false })
      continue
    }
    try {
      const isDeleted = await removeOne(r, removed.length === 0, ctx.helper)
      if (isDeleted) removed.push(r.real)
      out.push({ path: p.given, is_deleted: isDeleted })
    } catch (cause) {
      throw removed.length > 0 ? afterChanges(cause, `Deleted before the failure: ${removed.join(', ')}.`) : cause
    }
  }
  return { paths: out }
}
