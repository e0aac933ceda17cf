import { describe, expect, it } from 'vitest'
import { CONTRACTS, TOOLS, annotationsFor, effectTraits } from '@hands/contracts'

describe('effect', () => {
  it('derives every descriptor annotation from the effect and its destroying flag, never per tool', () => {
    for (const t of TOOLS) expect(t.annotations).toEqual(annotationsFor(t.effect, t.destroysWhen))
  })

  it('marks copy and move destructive, since is_overwrite may replace files, and keeps them mutating', () => {
    const destructive = TOOLS.filter((t) => t.annotations.destructiveHint).map((t) => t.name)
    expect(destructive).toEqual(['shell_run', 'shell_background', 'shell_type', 'copy', 'move', 'delete'])
    for (const name of ['copy', 'move']) {
      const t = TOOLS.find((d) => d.name === name)
      expect(t).toMatchObject({
        effect: 'mutate',
        destroysWhen: 'is_overwrite',
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
      })
      expect(Object.keys((t!.input as { properties: object }).properties)).toContain(t?.destroysWhen)
    }
    expect(TOOLS.filter((t) => t.destroysWhen !== null).map((t) => t.name)).toEqual(['copy', 'move'])
    expect(annotationsFor('mutate').destructiveHint).toBe(false)
  })

  it('marks read tools read-only and parallel-safe and nothing else', () => {
    expect(annotationsFor('read').readOnlyHint).toBe(true)
    for (const e of ['mutate', 'destroy', 'execute'] as const) {
      expect(annotationsFor(e).readOnlyHint).toBe(false)
      expect(effectTraits(e).isParallelSafe).toBe(false)
    }
    expect(effectTraits('read').isParallelSafe).toBe(true)
  })

  it('asks for confirmation on destroy only, and delete is the tool that destroys', () => {
    expect(CONTRACTS.filter((c) => effectTraits(c.effect).isConfirmed).map((c) => c.name)).toEqual(['delete'])
  })

  it('reports only the execute tools as reaching an open world', () => {
    expect(CONTRACTS.filter((c) => annotationsFor(c.effect).openWorldHint).map((c) => c.name)).toEqual(['shell_run', 'shell_background', 'shell_type'])
  })

  it('hands out copies, so a host cannot change the derivation for everyone', () => {
    const a = annotationsFor('read')
    a.readOnlyHint = false
    expect(annotationsFor('read').readOnlyHint).toBe(true)
  })
})
