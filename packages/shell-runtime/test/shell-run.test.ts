import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { shellRun } from '@hands/contracts'
import { describe, expect, it } from 'vitest'
import { alive, eventually, FIXTURES, makeRuntime, rejection, valid } from './helpers.ts'

const validRun = <T>(value: T): T => valid(shellRun, value)

describe('shell_run', () => {
  it('runs every command in order, each with its own exit, stdout and stderr', async () => {
    const { rt, root } = makeRuntime()
    const r = validRun(await rt.shell_run({ commands: ['echo one; echo two >&2', 'exit 3', 'echo three > f.txt; cat f.txt', 'false'] }))
    expect(r.cwd).toBe(root)
    expect(r.commands.map((c) => c.command)).toEqual(['echo one; echo two >&2', 'exit 3', 'echo three > f.txt; cat f.txt', 'false'])
    expect(r.commands.map((c) => c.exit)).toEqual([0, 3, 0, 1])
    expect(r.commands[0]).toMatchObject({ stdout: 'one\n', stderr: 'two\n', timed_out: false, note: null })
    expect(r.commands[2]?.stdout).toBe('three\n')
    expect(r.exit).toBe(3)
    expect(r.timed_out).toBe(false)
  })

  it('reports a top-level exit of 0 when every command succeeds', async () => {
    const { rt } = makeRuntime()
    const r = validRun(await rt.shell_run({ commands: ['true', 'echo ok'] }))
    expect(r.exit).toBe(0)
  })

  it('gives commands /dev/null as stdin, so read -p fails fast instead of hanging', async () => {
    const { rt } = makeRuntime()
    const started = Date.now()
    const r = validRun(await rt.shell_run({ commands: ['read -p "Password: " pw; echo "read exited $?"', 'cat; echo "cat exited $?"'] }))
    expect(r.commands[0]?.stdout).toBe('read exited 1\n')
    expect(r.commands[1]?.stdout).toBe('cat exited 0\n')
    expect(Date.now() - started).toBeLessThan(20_000)
  })

  it('runs without a controlling terminal, so a prompt on /dev/tty fails fast', async () => {
    const { rt } = makeRuntime()
    const r = validRun(await rt.shell_run({ commands: ['echo hi > /dev/tty'] }))
    expect(r.commands[0]?.exit).not.toBe(0)
  })

  it('sets the non-interactive environment: TERM=dumb, pagers cat, git prompts off, NO_COLOR', async () => {
    const { rt } = makeRuntime()
    const r = validRun(await rt.shell_run({ commands: ['echo "$TERM|$PAGER|$GIT_PAGER|$GIT_TERMINAL_PROMPT|$GIT_EDITOR|$NO_COLOR"'] }))
    expect(r.commands[0]?.stdout).toBe('dumb|cat|cat|0|true|1\n')
  })

  it('leaves no trace of its own machinery in the command environment', async () => {
    const { rt } = makeRuntime()
    const r = validRun(
      await rt.shell_run({
        commands: ['echo "[${BASH_ENV-}][${HANDS_CGROUP_PROCS-}][${HANDS_PIPESTATUS-}][$0][$#]"; bash -c \'echo "child [${BASH_ENV-}]"\''],
      }),
    )
    expect(r.commands[0]?.stdout).toBe('[][][][bash][0]\nchild []\n')
  })

  it('returns promptly when a command leaves `sleep 1000 &` behind, and kills it with the tree', async () => {
    const { rt } = makeRuntime()
    const started = Date.now()
    const r = validRun(await rt.shell_run({ commands: ['sleep 1000 & echo "pid $!"', 'echo next'] }))
    expect(Date.now() - started).toBeLessThan(20_000)
    const pid = Number(r.commands[0]?.stdout.trim().split(' ')[1])
    expect(alive(pid)).toBe(false)
    expect(r.commands[0]?.exit).toBe(0)
    expect(r.commands[0]?.note).toContain(`(pid ${pid})`)
    expect(r.commands[0]?.note).toContain('shell_background')
    expect(r.commands[1]).toMatchObject({ stdout: 'next\n', note: null })
  })

  it('kills a setsid daemon a command started, even while it holds the output pipe', async () => {
    const { rt } = makeRuntime()
    const r = validRun(await rt.shell_run({ commands: [`bash ${FIXTURES}/setsid-grandchild.sh & until [ -e parent.ready ]; do sleep 0.1; done; echo done`] }))
    const grandchild = Number(/grandchild (\d+)/.exec(r.commands[0]?.stdout ?? '')?.[1])
    expect(grandchild).toBeGreaterThan(0)
    expect(alive(grandchild)).toBe(false)
    expect(r.commands[0]?.stdout).toContain('done')
    expect(r.commands[0]?.note).toContain('shell_background')
  })

  it('kills every kind of leftover descendant: setsid, nohup, double fork, SIGTERM ignorers', async () => {
    const { rt } = makeRuntime({ stopGraceMs: 300 })
    const r = validRun(
      await rt.shell_run({ commands: [`bash ${FIXTURES}/tree.sh > tree.out & until grep -q "tree ready" tree.out; do sleep 0.1; done; cat tree.out`] }),
    )
    const pids = [...(r.commands[0]?.stdout ?? '').matchAll(/pid (\d+)/g)].map((m) => Number(m[1]))
    expect(pids.length).toBeGreaterThanOrEqual(5)
    for (const p of pids) expect(alive(p)).toBe(false)
    expect(r.commands[0]?.note).toContain('SIGKILL')
  })

  it('reports a death by signal as 128+N and names the signal', async () => {
    const { rt } = makeRuntime()
    const r = validRun(await rt.shell_run({ commands: ['kill -TERM $$', 'kill -KILL $$', "sh -c 'kill -SEGV $$'"] }))
    expect(r.commands[0]?.exit).toBe(143)
    expect(r.commands[0]?.note).toContain('SIGTERM')
    expect(r.commands[1]?.exit).toBe(137)
    expect(r.commands[1]?.note).toContain('SIGKILL')
    expect(r.commands[2]?.exit).toBe(139)
    expect(r.commands[2]?.note).toContain('SIGSEGV')
    expect(r.exit).toBe(143)
  })

  it('names the failing stage when the last pipeline hid a failure behind exit 0', async () => {
    const { rt } = makeRuntime()
    const r = validRun(await rt.shell_run({ commands: ['(echo building; exit 2) | tee build.log', 'true | true', 'false | true; exit 0', 'echo a | false'] }))
    expect(r.commands[0]?.exit).toBe(0)
    expect(r.commands[0]?.note).toContain('stage 1 exited 2')
    expect(r.commands[0]?.note).toContain('PIPESTATUS 2 0')
    expect(r.commands[1]?.note).toBeNull()
    expect(r.commands[2]?.note).toContain('stage 1 exited 1')
    expect(r.commands[3]?.exit).toBe(1)
    expect(r.commands[3]?.note).toBeNull()
  })

  it('at the bound, kills the running command with its tree, marks timed_out and starts nothing after it', async () => {
    const { rt } = makeRuntime({ runBoundMs: 1500, stopGraceMs: 300 })
    const r = validRun(await rt.shell_run({ commands: ['echo first', 'setsid sleep 1000 & echo "pid $!"; trap "" TERM; sleep 1000', 'echo never'] }))
    expect(r.timed_out).toBe(true)
    expect(r.exit).toBeNull()
    expect(r.commands[0]).toMatchObject({ exit: 0, timed_out: false })
    const c = r.commands[1]
    expect(c).toMatchObject({ exit: null, timed_out: true })
    expect(c?.note).toContain('shell_background')
    expect(c?.note).toContain('shell_logs')
    expect(alive(Number(c?.stdout.trim().split(' ')[1]))).toBe(false)
    expect(r.commands[2]).toMatchObject({ command: 'echo never', exit: null, stdout: '', stderr: '', timed_out: false, duration_ms: 0 })
    expect(r.commands[2]?.note).toContain('Not started')
  })

  it('when its signal aborts, stops the running command with its whole tree, starts nothing after it, and the next call works', async () => {
    const { rt, root } = makeRuntime({ stopGraceMs: 300 })
    const cancel = new AbortController()
    const pending = rt.shell_run(
      { commands: ['echo first', 'setsid sleep 1000 & echo "pid $!"; trap "" TERM; seq 1 100000; touch started; sleep 1000', 'echo never'] },
      { signal: cancel.signal },
    )
    await eventually(() => (existsSync(join(root, 'started')) ? true : undefined), 20_000, 'the second command')
    cancel.abort()
    const r = validRun(await pending)
    expect(r.timed_out).toBe(false)
    expect(r.commands[0]).toMatchObject({ exit: 0, stdout: 'first\n' })
    const c = r.commands[1]
    expect(c?.note).toContain('because the call was cancelled')
    expect(alive(Number(/pid (\d+)/.exec(c?.stdout ?? '')?.[1]))).toBe(false)
    // Its whole output stays on disk, named by the note.
    const spool = /(\/\S+\.stdout)/.exec(c?.note ?? '')?.[1] as string
    expect(readFileSync(spool, 'utf8')).toContain('100000\n')
    expect(r.commands[2]).toMatchObject({ command: 'echo never', exit: null, stdout: '', note: 'Not started: the call was cancelled.' })
    expect(validRun(await rt.shell_run({ commands: ['pwd'] })).commands[0]).toMatchObject({ stdout: `${root}\n`, exit: 0 })
  })

  it('with a signal already aborted, starts nothing', async () => {
    const { rt } = makeRuntime()
    const r = validRun(await rt.shell_run({ commands: ['echo a', 'echo b'] }, { signal: AbortSignal.abort() }))
    expect(r.commands.map((c) => [c.exit, c.note])).toEqual([
      [null, 'Not started: the call was cancelled.'],
      [null, 'Not started: the call was cancelled.'],
    ])
  })

  it('runs the next commands after the bound had to SIGKILL a tree that ignored SIGTERM', async () => {
    const { rt, root } = makeRuntime({ runBoundMs: 1000, stopGraceMs: 200 })
    const r = validRun(await rt.shell_run({ commands: ['trap "" TERM; sleep 1000'] }))
    expect(r.timed_out).toBe(true)
    const next = validRun(await rt.shell_run({ commands: ['pwd', 'echo again'] }))
    expect(next.commands.map((c) => [c.exit, c.stdout])).toEqual([
      [0, `${root}\n`],
      [0, 'again\n'],
    ])
  })

  it('keeps the first non-zero exit at the top level even when a later command hits the bound', async () => {
    const { rt } = makeRuntime({ runBoundMs: 1000, stopGraceMs: 100 })
    const r = validRun(await rt.shell_run({ commands: ['exit 4', 'sleep 1000'] }))
    expect(r.exit).toBe(4)
    expect(r.timed_out).toBe(true)
  })

  it('runs a 200 KB line (longer than one argument may be) like any other, and its script file is read-only and gone after', async () => {
    const { rt } = makeRuntime()
    const payload = 'a'.repeat(200_000)
    const r = validRun(await rt.shell_run({ commands: [`printf %s '${payload}' | wc -c; echo "$0"; exit 4`, 'echo next'] }))
    expect(r.commands[0]).toMatchObject({ stdout: '200000\nbash\n', stderr: '', exit: 4 })
    expect(r.commands[1]).toMatchObject({ stdout: 'next\n', exit: 0 })
    // The long line reaches bash through a file in the spool, which the command can read but not change.
    const attempt = await rt.shell_run({ commands: [`: '${payload}'; f=$(ls ${rt.spoolDir}/script-*.bash); echo "$f"; echo changed >> "$f"`] })
    const file = attempt.commands[0]?.stdout.trim() ?? ''
    expect(file).toMatch(/\/script-\d+\.bash$/)
    expect(attempt.commands[0]?.exit).not.toBe(0)
    expect(existsSync(file)).toBe(false)
  })

  it('runs in cwd when given, relative to the workspace root', async () => {
    const { rt, root } = makeRuntime()
    mkdirSync(join(root, 'sub'))
    const r = validRun(await rt.shell_run({ commands: ['pwd'], cwd: 'sub' }))
    expect(r.cwd).toBe(join(root, 'sub'))
    expect(r.commands[0]?.stdout).toBe(`${join(root, 'sub')}\n`)
  })

  it('refuses a cwd outside the roots with outside_roots before anything runs', async () => {
    const { rt, root } = makeRuntime()
    const err = await rejection(rt.shell_run({ commands: [`touch ${root}/ran`], cwd: '/' }))
    expect(err.code).toBe('outside_roots')
    expect(err.is_preflight).toBe(true)
  })

  it('refuses a missing cwd with not_found and a file with not_a_directory', async () => {
    const { rt, root } = makeRuntime()
    writeFileSync(join(root, 'file'), 'x')
    expect((await rejection(rt.shell_run({ commands: ['true'], cwd: 'missing' }))).code).toBe('not_found')
    expect((await rejection(rt.shell_run({ commands: ['true'], cwd: 'file' }))).code).toBe('not_a_directory')
  })

  it('consults the host gates for cwd and refuses what they deny', async () => {
    const { root } = makeRuntime()
    const { rt } = makeRuntime({ roots: [root], gates: [(_path, access) => (access === 'cwd' ? 'deny' : 'allow')] })
    expect((await rejection(rt.shell_run({ commands: ['true'] }))).code).toBe('access_denied')
  })

  it('refuses input that breaks the schema with invalid_input', async () => {
    const { rt } = makeRuntime()
    const err = await rejection(rt.shell_run({ commands: [] }))
    expect(err.code).toBe('invalid_input')
    expect(err.message).toContain('commands')
  })

  it('refuses every call after close()', async () => {
    const { rt } = makeRuntime()
    await rt.close()
    await rt.close()
    expect((await rejection(rt.shell_run({ commands: ['true'] }))).is_preflight).toBe(true)
  })

  it('stops a running shell_run when the runtime closes, and starts nothing after it', async () => {
    const { rt, root } = makeRuntime()
    const run = rt.shell_run({ commands: ['touch started; sleep 1000', 'echo after'] })
    await eventually(() => (existsSync(join(root, 'started')) ? true : undefined))
    await rt.close()
    const r = validRun(await run)
    expect(r.commands[0]?.exit).toBe(143)
    expect(r.commands[1]?.note).toContain('closed')
  })
})
