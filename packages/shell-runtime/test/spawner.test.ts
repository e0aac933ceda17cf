import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { alive, makeRuntime, MECHANISMS } from './helpers.ts'

/** The parent of process `pid` (from /proc/<pid>/stat). */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
}

describe('the spawner', () => {
  it('smoke', async () => {
    const { rt } = makeRuntime({ confine: MECHANISMS[0] })
    const r = await rt.shell_run({ commands: ['echo hi; echo err >&2; exit 3', 'cat /proc/$PPID/stat', 'echo $PPID'] })
    console.log(JSON.stringify(r, null, 1))
    expect(alive(process.pid)).toBe(true)
    expect(parentOf(process.pid)).toBeGreaterThan(0)
  })
})
