import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ErrorEnvelope, TOOL_NAMES, checkResult, checkSchema, contractOf, type ToolName } from '@hands/contracts'
import { createSurface, type CallOutcome, type Session, type SurfaceOptions } from '@hands/surface'
import { tempRoot } from './helpers/tmp.ts'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.()
})

function open(options: Omit<SurfaceOptions, 'roots'> = {}): { session: Session; root: string } {
  const root = tempRoot()
  const session = createSurface({ roots: [root.dir], ...options })
  cleanups.push(root.remove, () => session.close())
  return { session, root: root.dir }
}

/** Every outcome must match its contract: a result its result schema, a failure the envelope. */
function expectContract(outcome: CallOutcome): void {
  if (outcome.ok) expect(checkResult(contractOf(outcome.tool as ToolName), outcome.result).ok, JSON.stringify(outcome)).toBe(true)
  else expect(checkSchema(ErrorEnvelope, outcome.error).ok, JSON.stringify(outcome)).toBe(true)
}

describe('createSurface', () => {
  it('offers the ten tools in order, and the five fs tools when the shell toggle is off', () => {
    expect(open().session.tools.map((t) => t.name)).toEqual(TOOL_NAMES)
    const off = open({ toggles: { shell: false } }).session
    expect(off.tools.map((t) => t.name)).toEqual(['copy', 'move', 'delete', 'create_directory', 'file_exists'])
    expect(off.prompt.executionLine).toBeNull()
    expect(off.prompt.inspectLine).not.toContain('shell_run')
  })

  it('names the host code tool in descriptions and prompt', () => {
    const { session } = open({ codeTool: 'run_js' })
    expect(session.tools[0]?.description).toContain('run_js')
    expect(session.prompt.codeToolParagraph).toContain('shell_logs')
    expect(session.prompt.executionLine).toContain('`run_js`')
  })

  it('with codeTool null, names no code tool in any description or prompt line, and gives no code-tool paragraph', () => {
    const { session } = open({ codeTool: null })
    const text = [...session.tools.map((t) => t.description), session.prompt.executionLine, session.prompt.batchLine].join('\n')
    expect(text).not.toContain('python_execution')
    expect(text).not.toMatch(/\bnull\b/)
    expect(session.tools[0]?.description).toMatch(/Batch related lines into one call, not one call each\.$/)
    expect(session.prompt.executionLine).toBe('- Long-running work: `shell_background`, then poll `shell_logs`; no tool waits for you.')
    expect(session.prompt.codeToolParagraph).toBeNull()
  })

  it('returns unknown_tool with the list of tools for a name that does not exist', async () => {
    const outcome = await open().session.call('shell', { commands: ['true'] })
    expect(outcome).toMatchObject({ ok: false, error: { tool: 'shell', code: 'unknown_tool', is_preflight: true } })
    if (!outcome.ok) expect(outcome.error.hint).toContain('shell_run, shell_background')
    expectContract(outcome)
  })

  it('returns disabled for a shell tool switched off by the toggle, and runs nothing', async () => {
    const { session, root } = open({ toggles: { shell: false } })
    const outcome = await session.call('shell_run', { commands: [`touch ${join(root, 'ran')}`] })
    expect(outcome).toMatchObject({ ok: false, error: { code: 'disabled', is_preflight: true } })
    expect(existsSync(join(root, 'ran'))).toBe(false)
  })

  it('returns invalid_input naming the property before anything runs', async () => {
    const { session, root } = open()
    const outcome = await session.call('shell_run', { commands: [`touch ${join(root, 'ran')}`], timeout_secs: 5 })
    expect(outcome).toMatchObject({ ok: false, error: { code: 'invalid_input', is_preflight: true } })
    if (!outcome.ok) {
      expect(outcome.error.message).toContain('`timeout_secs` is not a property')
      expect(outcome.error.hint).toContain('`commands`, `cwd`')
    }
    expect(existsSync(join(root, 'ran'))).toBe(false)
  })

  it('lets beforeCall refuse a call, which then runs nothing', async () => {
    const seen: string[] = []
    const { session, root } = open({
      beforeCall: (c) => {
        seen.push(`${c.tool}:${c.effect}`)
        return c.effect === 'execute' ? { refuse: 'no commands in this sandbox' } : undefined
      },
    })
    const outcome = await session.call('shell_run', { commands: [`touch ${join(root, 'ran')}`] })
    expect(outcome).toMatchObject({ ok: false, error: { code: 'refused', is_preflight: true } })
    if (!outcome.ok) expect(outcome.error.message).toContain('no commands in this sandbox')
    expect(existsSync(join(root, 'ran'))).toBe(false)
    expect((await session.call('file_exists', { paths: ['.'] })).ok).toBe(true)
    expect(seen).toEqual(['shell_run:execute', 'file_exists:read'])
  })

  it('treats a beforeCall hook that throws as a refusal', async () => {
    const { session } = open({
      beforeCall: () => {
        throw new Error('policy server down')
      },
    })
    expect(await session.call('file_exists', { paths: ['.'] })).toMatchObject({ ok: false, error: { code: 'refused' } })
  })

  it('reports every finished call to afterCall with its outcome and duration', async () => {
    const calls: Array<{ tool: string; ok: boolean; duration_ms: number }> = []
    const { session } = open({ afterCall: (c) => void calls.push({ tool: c.tool, ok: c.outcome.ok, duration_ms: c.duration_ms }) })
    await session.call('create_directory', { paths: ['x'] })
    await session.call('copy', { src: 'missing', dest: 'y' })
    expect(calls.map((c) => [c.tool, c.ok])).toEqual([
      ['create_directory', true],
      ['copy', false],
    ])
    for (const c of calls) expect(c.duration_ms).toBeGreaterThanOrEqual(0)
  })

  it('asks confirm before delete and keeps the path when it declines', async () => {
    const asked: unknown[] = []
    let answer = false
    const { session, root } = open({
      confirm: (r) => {
        asked.push(r)
        return answer
      },
    })
    mkdirSync(join(root, 'd'))
    const declined = await session.call('delete', { paths: ['d'] })
    expect(declined).toMatchObject({ ok: false, error: { code: 'not_confirmed', is_preflight: true } })
    expect(existsSync(join(root, 'd'))).toBe(true)
    answer = true
    expect(await session.call('delete', { paths: ['d'] })).toMatchObject({ ok: true, result: { paths: [{ path: 'd', is_deleted: true }] } })
    expect(asked).toHaveLength(2)
    expect(asked[0]).toMatchObject({ tool: 'delete', action: 'delete' })
  })

  it('asks confirm before copy overwrites an existing destination', async () => {
    const asked: Array<{ action: string }> = []
    const { session, root } = open({ confirm: (r) => (asked.push(r), false) })
    writeFileSync(join(root, 'a'), 'new')
    writeFileSync(join(root, 'b'), 'old')
    expect(await session.call('copy', { src: 'a', dest: 'b', is_overwrite: true })).toMatchObject({ ok: false, error: { code: 'not_confirmed' } })
    expect(asked.map((a) => a.action)).toEqual(['overwrite'])
  })

  it('matches the result contract on every tool path it takes', async () => {
    const { session, root } = open()
    writeFileSync(join(root, 'f'), 'x')
    const outcomes = [
      await session.call('shell_run', { commands: ['echo hi', 'false'] }),
      await session.call('shell_background', { commands: ['sleep 30'], id: 's' }),
      await session.call('shell_logs', { id: 's', n: 5 }),
      await session.call('shell_type', { id: 's', text: '', is_enter: false }),
      await session.call('shell_stop', { id: 's' }),
      await session.call('copy', { src: 'f', dest: 'g' }),
      await session.call('move', { src: 'g', dest: 'h/g' }),
      await session.call('create_directory', { paths: ['k'] }),
      await session.call('file_exists', { paths: ['f', 'zz'] }),
      await session.call('delete', { paths: ['h', 'zz'] }),
      await session.call('shell_logs', { id: 's' }),
    ]
    for (const o of outcomes) expectContract(o)
    expect(outcomes.slice(0, -1).every((o) => o.ok)).toBe(true)
    expect(outcomes.at(-1)).toMatchObject({ ok: false, error: { code: 'unknown_id' } })
  })

  it('lists background shells as resources and notifies listeners when the list changes', async () => {
    const { session } = open()
    let changes = 0
    session.onResourcesChanged(() => changes++)
    await session.call('shell_background', { commands: ['sleep 30'], id: 'sl' })
    expect(session.resources().map((r) => [r.id, r.status])).toEqual([['sl', 'running']])
    await session.call('shell_stop', { id: 'sl' })
    expect(session.resources()).toEqual([])
    expect(changes).toBeGreaterThanOrEqual(2)
  })

  it('refuses calls after close', async () => {
    const { session } = open()
    await session.close()
    expect(await session.call('file_exists', { paths: ['.'] })).toMatchObject({ ok: false, error: { code: 'disabled' } })
  })
})
