import type { Stats } from 'node:fs'
import type { ToolError } from '@hands/contracts'
import { consultGates, type PathAccess } from '../confine/gate.ts'
import { gateRefusal, resolvePath, type Resolved } from '../confine/resolve.ts'
import { isRoot, rootsUnder } from '../confine/roots.ts'
import { invalidInput, protectedPath, type Named } from '../errors/refuse.ts'
import type { Context } from './context.ts'

/** A gate's answer for one resolved path: 'allow' | 'hide' (the caller decides what hiding means). Throws on 'deny'. */
export async function gateOf(ctx: Context, r: Resolved, access: PathAccess, tool: string): Promise<'allow' | 'hide'> {
  const verdict = await consultGates(ctx.gates, r.real, access, tool)
  if (verdict === 'deny') throw gateRefusal(r, 'deny')
  return verdict
}

/** Refuse a write through a gate that hides or denies the path. */
export async function gateWrite(ctx: Context, r: Resolved, access: PathAccess, tool: string): Promise<void> {
  const verdict = await consultGates(ctx.gates, r.real, access, tool)
  if (verdict !== 'allow') throw gateRefusal(r, verdict)
}

/** The protected_path refusal when `r` is an allowed root or contains one, else undefined. */
export function protectedRefusal(ctx: Context, r: Resolved): ToolError | undefined {
  if (isRoot(ctx.roots, r.real)) return protectedPath(r, `is the allowed root ${r.real}`, ctx.roots)
  const under = rootsUnder(ctx.roots, r.real)
  if (under.length > 0) return protectedPath(r, `contains the allowed root ${under.join(', ')}`, ctx.roots)
  return undefined
}

/** The kind of an lstat result. */
export function kindOfStats(st: Stats): 'file' | 'dir' | 'link' | 'other' {
  if (st.isFile()) return 'file'
  if (st.isDirectory()) return 'dir'
  if (st.isSymbolicLink()) return 'link'
  return 'other'
}

/** True when two lstat results name the same object. */
export function sameObject(a: Stats, b: Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino
}

/** A name no one else picks, for a temporary sibling of `name`. */
export function tempName(name: string, tag: string): string {
  const short = name.length > 100 ? name.slice(0, 100) : name
  return `.${short}.hands-${tag}-${process.pid}-${Math.random().toString(36).slice(2, 10)}`
}

/**
 * Refuse `link/` (a trailing slash after a symlink) where the tool would remove what the path
 * names: the slash would make it the directory the link leads to, and delete and move act on
 * a symlink itself, never its target. Returns quietly for anything else.
 */
export async function refuseSlashedLink(ctx: Context, r: Named, tool: string): Promise<void> {
  if (!/[^/]\/+$/.test(r.given)) return
  const bare = r.given.replace(/\/+$/, '')
  const named = await resolvePath(ctx.roots, bare, { final: 'nofollow', label: r.label }).catch(() => null)
  if (named?.stats?.isSymbolicLink() === true) {
    throw invalidInput(
      `${r.label} ${JSON.stringify(r.given)} ends with a slash after a symlink, so it names the directory the link leads to; ${tool} acts on a symlink itself, never on its target.`,
      `Pass ${JSON.stringify(bare)} to ${tool} the symlink itself.`,
    )
  }
}
