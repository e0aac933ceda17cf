import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A fresh real temp directory and its removal. */
export function tempRoot(prefix = 'hands-surface-'): { dir: string; remove: () => void } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)))
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}
