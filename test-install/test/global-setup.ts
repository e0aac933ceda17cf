import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { packAll, type Tarballs } from '../src/packages.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    /** Each published package packed once for the whole run, by package directory (`inject('tarballs')`). */
    tarballs: Tarballs
  }
}

/** Pack every published package once before any test file runs; remove the tarballs after the last. */
export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'hands-pack-'))
  project.provide('tarballs', packAll(dir))
  return () => rmSync(dir, { recursive: true, force: true })
}
