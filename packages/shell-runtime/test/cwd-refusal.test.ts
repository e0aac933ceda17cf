import { mkdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { makeRuntime, rejection, tempDir } from './helpers.ts'

describe('a cwd refusal names the cwd as given and the root it left, never where it leads outside', () => {
  it('for a symlink to an outside directory, in shell_run and shell_background', async () => {
    const { rt, root } = makeRuntime()
    const outside = tempDir('outside')
    mkdirSync(join(outside, 'secret-place'))
    symlinkSync(join(outside, 'secret-place'), join(root, 'link'))
    for (const call of [() => rt.shell_run({ commands: ['pwd'], cwd: 'link' }), () => rt.shell_background({ commands: ['pwd'], cwd: 'link/' })]) {
      const e = await rejection(call())
      expect(e.code).toBe('outside_roots')
      expect(e.message).toContain('cwd "link')
      expect(e.message).toContain(root)
      expect(`${e.message}\n${e.hint}`).not.toContain('secret-place')
      expect(`${e.message}\n${e.hint}`).not.toContain(outside)
    }
  })

  it('for /proc/self/cwd, without revealing the working directory of the host', async () => {
    const { rt } = makeRuntime()
    const e = await rejection(rt.shell_run({ commands: ['pwd'], cwd: '/proc/self/cwd' }))
    expect(e.code).toBe('outside_roots')
    expect(e.message).toContain('"/proc/self/cwd"')
    expect(`${e.message}\n${e.hint}`).not.toContain(process.cwd())
  })
})
