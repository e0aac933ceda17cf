/**
 * The package on its own: its helper is built inside it, and the host report says what confines
 * commands here, naming that helper.
 */
import { accessSync, constants } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { describeHost, helperPath } from '../src/index.ts'
import { chooseConfiner } from '../src/parts.ts'

describe('@hands/sandbox', () => {
  it('carries its helper, built and executable, under its own native/bin', () => {
    const helper = helperPath()
    expect(helper).toBe(join(import.meta.dirname, '..', 'native', 'bin', `linux-${process.arch}`, 'hands-confine'))
    expect(() => accessSync(helper as string, constants.X_OK)).not.toThrow()
  })

  it('reports the helper, Landlock, seccomp, bubblewrap and cgroups of this host, one line each', () => {
    const lines = new Map(describeHost().lines)
    expect(lines.get('helper')).toBe(helperPath())
    expect([...lines.keys()]).toEqual(['helper', 'kernel', 'landlock', 'seccomp', 'bubblewrap', 'cgroups'])
  })

  it('exports the building blocks a process manager needs', () => {
    expect(typeof chooseConfiner).toBe('function')
  })
})
