import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { checkResult, type ToolContract } from '@hands/contracts'
import { expect } from 'vitest'
import { createFsRuntime, type FsRuntime, type FsRuntimeOptions } from '../../src/index.ts'
import { hashTree, makeTree, tempDir, type Temp } from './tree.ts'

/**
 * One test's world: `base/ROOT` (the workspace root), `base/ROOT2` (a second root), and a
 * sentinel tree `base/outside` (with prefix siblings `base/ROOT-old`, `base/ROOTx`) that no
 * tool may ever change. `sentinel()` hashes everything outside the roots.
 */
export interface World {
  base: string
  root: string
  root2: string
  out: string
  fs: FsRuntime
  /** Hash of the sentinel trees outside the roots. */
  sentinel(): string
  cleanup(): void
  /** A runtime over the same roots with these options added to the world's. */
  with(options: Omit<FsRuntimeOptions, 'roots'>): FsRuntime
}

export const SENTINEL_LAYOUT = ['secret', 'dir/inner', 'dir/sub/deep', 'target/', 'link-back => ../ROOT']

export function makeWorld(options: Omit<FsRuntimeOptions, 'roots'> = {}): World {
  const temp: Temp = tempDir()
  const base = temp.path
  const root = join(base, 'ROOT')
  const root2 = join(base, 'ROOT2')
  const out = join(base, 'outside')
  for (const d of [root, root2, out]) mkdirSync(d)
  makeTree(out, SENTINEL_LAYOUT)
  makeTree(join(base, 'ROOT-old'), ['secret'])
  makeTree(join(base, 'ROOTx'), ['secret'])
  const sentinel = () => [out, join(base, 'ROOT-old'), join(base, 'ROOTx')].map(hashTree).join(':')
  return {
    base,
    root,
    root2,
    out,
    fs: createFsRuntime({ roots: [root, root2], ...options }),
    sentinel,
    cleanup: temp.cleanup,
    with: (more) => createFsRuntime({ roots: [root, root2], ...options, ...more }),
  }
}

/** Assert a result validates against the tool's contract result schema, and return it. */
export function valid<T>(contract: ToolContract, result: T): T {
  const outcome = checkResult(contract, result)
  expect(outcome.ok, JSON.stringify(outcome)).toBe(true)
  return result
}
