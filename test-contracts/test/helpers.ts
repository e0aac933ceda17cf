import { readFileSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import type { Json } from '../src/rules.ts'

export const REPO = join(import.meta.dirname, '..', '..')

/** The schema as the model and a second validator see it: plain JSON. */
export const plain = (v: unknown) => JSON.parse(JSON.stringify(v)) as Json

/** Every file under generated/, with its text. */
export function generatedFiles(): Array<{ path: string; text: string }> {
  const dir = join(REPO, 'generated')
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const abs = join(e.parentPath, e.name)
      return { path: relative(REPO, abs), text: readFileSync(abs, 'utf8') }
    })
}
