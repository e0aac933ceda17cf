import { readFileSync } from 'node:fs'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { CUT_LINE_MARK, shellBackground, shellLogs, shellStop, shellType } from '@hands/contracts'
import { describe, expect, it } from 'vitest'
import { alive, eventually, FIXTURES, logsUntil, makeRuntime, rejection, valid } from './helpers.ts'

async function exited(rt: ReturnType<typeof makeRuntime>['rt'], id: string) {
  return eventually(
    async () => {
      const r = await rt.shell_logs({ id, n: 1 })
      return r.status === 'exited' ? r : undefined
    },
    20_000,
    `${id} to exit`,
  )
}

describe('shell_background', () => {
  it('returns at once with an id derived from the program name; collisions get -2 and -3', async () => {
    const { rt, root } = makeRuntime()
    const started = Date.now()
    const a = valid(shellBackground, await rt.shell_background({ commands: ['sleep 1000'] }))
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(a).toMatchObject({ id: 'sleep', cwd: root, commands: ['sleep 1000'], status: 'running', note: null, is_already_running: false })
    expect(a.pid).toBeGreaterThan(0)
    const b = await rt.shell_background({ commands: ['sleep 999'] })
    const c = await rt.shell_background({ commands: ['sleep 998'] })
    expect([b.id, c.id]).toEqual(['sleep-2', 'sleep-3'])
    const npm = await rt.shell_background({ commands: ['FOO=1 npm-not-installed run dev'] })
    expect(npm.id).toBe('npm-not-installed')
    const vite = await rt.shell_background({ commands: ['cd . && ./node_modules/.bin/vite --port 1'] })
    expect(vite.id).toBe('vite')
  })

  it('returns the live shell for the same commands and cwd, and spawns nothing', async () => {
    const { rt } = makeRuntime()
    const a = await rt.shell_background({ commands: ['sleep 1000', 'echo after'] })
    const b = valid(shellBackground, await rt.shell_background({ commands: ['sleep 1000', 'echo after'] }))
    expect(b).toMatchObject({ id: a.id, pid: a.pid, is_already_running: true, note: null })
    expect(rt.resources()).toHaveLength(1)
  })

  it('returns an explicit live id with a note to stop it first when its script differs', async () => {
    const { rt } = makeRuntime()
    const a = await rt.shell_background({ commands: ['sleep 1000'], id: 'server' })
    const b = valid(shellBackground, await rt.shell_background({ commands: ['sleep 5'], id: 'server' }))
    expect(b).toMatchObject({ id: 'server', pid: a.pid, commands: ['sleep 1000'], is_already_running: true })
    expect(b.note).toContain('shell_stop')
    const same = await rt.shell_background({ commands: ['sleep 1000'], id: 'server' })
    expect(same).toMatchObject({ is_already_running: true, note: null })
  })

  it('replaces an exited id with a new shell', async () => {
    const { rt } = makeRuntime()
    const a = await rt.shell_background({ commands: ['echo first'], id: 'job' })
    await exited(rt, 'job')
    const b = await rt.shell_background({ commands: ['echo second; sleep 1000'], id: 'job' })
    expect(b).toMatchObject({ id: 'job', is_already_running: false, status: 'running' })
    expect(b.pid).not.toBe(a.pid)
    await logsUntil(rt, 'job', (l) => l.includes('second'))
    expect((await rt.shell_logs({ id: 'job' })).lines).not.toContain('first')
  })

  it('runs the lines in order as one script, and a failing line does not stop the next', async () => {
    const { rt, root } = makeRuntime()
    mkdirSync(join(root, 'sub'))
    const b = await rt.shell_background({ commands: ['echo one', 'false', 'echo "two $TERM"', 'pwd'], cwd: 'sub' })
    const r = await exited(rt, b.id)
    expect(r.exit).toBe(0)
    expect((await rt.shell_logs({ id: b.id })).lines).toEqual(['one', 'two xterm-256color', join(root, 'sub')])
  })

  it('runs a script over 128 KiB to its end', async () => {
    const { rt } = makeRuntime()
    const filler = Array.from({ length: 2000 }, (_, i) => `: ${String(i).padStart(4, '0')} ${'x'.repeat(70)}`)
    const b = await rt.shell_background({ commands: ['echo started', ...filler, 'echo finished'] })
    expect(Buffer.byteLength(b.commands.join('\n'))).toBeGreaterThan(128 * 1024)
    const r = await exited(rt, b.id)
    expect(r.exit).toBe(0)
    expect((await rt.shell_logs({ id: b.id })).lines).toEqual(['started', 'finished'])
  })

  it('reports a death by signal as 128+N', async () => {
    const { rt } = makeRuntime()
    const b = await rt.shell_background({ commands: ['kill -KILL $$'] })
    const r = await exited(rt, b.id)
    expect(r.exit).toBe(137)
  })
})

describe('shell_logs', () => {
  it('returns lines as a person reads them: no escapes, redraws collapsed, CRLF normalised', async () => {
    const { rt } = makeRuntime()
    const b = await rt.shell_background({ commands: [`bash ${FIXTURES}/progress.sh`] })
    await exited(rt, b.id)
    const r = valid(shellLogs, await rt.shell_logs({ id: b.id }))
    expect(r.lines).toEqual(['progress 100% [##########]', 'green and underlined', 'redrawn', 'done'])
    expect(r).toMatchObject({ status: 'exited', exit: 0, dropped_lines: 0 })
  })

  it('reads a progress bar drawn with \\r as its final state, even while it is unfinished', async () => {
    const { rt } = makeRuntime()
    const b = await rt.shell_background({ commands: ["for i in 1 2 3 4 5; do printf '\\rdownloading %d/5' $i; done; sleep 1000"] })
    const lines = await logsUntil(rt, b.id, (l) => l.at(-1) === 'downloading 5/5')
    expect(lines).toEqual(['downloading 5/5'])
  })

  it('returns a trailing prompt without a newline as the last line', async () => {
    const { rt } = makeRuntime()
    const b = await rt.shell_background({ commands: ['echo ready; printf ">>> "; sleep 1000'] })
    expect(await logsUntil(rt, b.id, (l) => l.length === 2)).toEqual(['ready', '>>> '])
  })

  it('returns the last n lines', async () => {
    const { rt } = makeRuntime()
    const b = await rt.shell_background({ commands: ['seq 1 500'] })
    await exited(rt, b.id)
    const r = await rt.shell_logs({ id: b.id, n: 3 })
    expect(r.lines).toEqual(['498', '499', '500'])
    expect((await rt.shell_logs({ id: b.id })).lines).toHaveLength(200)
  })

  it('counts dropped_lines exactly: evicted since the previous read and never returned', async () => {
    const { rt } = makeRuntime({ ringLines: 100 })
    const b = await rt.shell_background({ commands: ['stty -echo; seq 1 250; read x; seq 251 300; read x; seq 301 1000'] })
    // Wait on the log file, not on shell_logs, which would count as reads.
    const log = () => readFileSync(rt.resources()[0]?.log_path as string, 'latin1')
    await eventually(() => (log().includes('\n250\r\n') ? true : undefined))
    // 250 lines and the cursor's empty row into 100 rows of history plus the 50-row screen:
    // rows 1–101 were evicted unseen.
    const first = await rt.shell_logs({ id: b.id, n: 10 })
    expect(first.lines[0]).toBe('241')
    expect(first.dropped_lines).toBe(101)
    expect((await rt.shell_logs({ id: b.id, n: 10 })).dropped_lines).toBe(0)
    await rt.shell_type({ id: b.id, text: '' })
    await eventually(() => (log().includes('\n300\r\n') ? true : undefined))
    // Rows 102–151 were evicted: 50, never returned (the reads returned 241–250 only).
    const second = await rt.shell_logs({ id: b.id, n: 100 })
    expect(second.dropped_lines).toBe(50)
    expect(second.lines[0]).toBe('201')
    await rt.shell_type({ id: b.id, text: '' })
    await eventually(() => (rt.resources()[0]?.status === 'exited' ? true : undefined))
    // 700 more lines: 152–851 evicted; 201–300 were returned, so 600 were dropped.
    const third = await rt.shell_logs({ id: b.id, n: 5 })
    expect(third.lines).toEqual(['996', '997', '998', '999', '1000'])
    expect(third.dropped_lines).toBe(600)
  })

  it('counts a long line once: of 2,000 lines of 4,094 characters, 1,521 dropped and the oldest kept marked as cut', async () => {
    const { rt } = makeRuntime()
    const b = await rt.shell_background({ commands: [`python3 ${FIXTURES}/long-lines.py 2000 4094`] })
    // Wait on the resource list, not on shell_logs, which would count as reads.
    await eventually(() => (rt.resources()[0]?.status === 'exited' ? true : undefined))
    const r = valid(shellLogs, await rt.shell_logs({ id: b.id, n: 2000 }))
    // 21 rows a line at 200 columns: 42,001 rows (the cursor's last) into 10,000 + 50 leave
    // lines 0–1520 wholly gone and the last 11 rows of line 1521 (2,094 characters) kept.
    const line = (i: number) => `${String(i).padStart(6, '0')}${'x'.repeat(4088)}`
    expect(r.dropped_lines).toBe(1521)
    expect(r.lines).toHaveLength(479)
    expect(r.lines[0]).toBe(`${CUT_LINE_MARK}${line(1521).slice(2000)}`)
    expect(r.lines.slice(1)).toEqual(Array.from({ length: 478 }, (_, i) => line(1522 + i)))
    expect((await rt.shell_logs({ id: b.id, n: 2000 })).dropped_lines).toBe(0)
  })

  it('reads every retained line through retainedLines without counting as a shell_logs read', async () => {
    const { rt } = makeRuntime({ ringLines: 100 })
    const b = await rt.shell_background({ commands: ['seq 1 250'] })
    // Wait on the resource list, not on shell_logs, which would count as reads.
    await eventually(() => (rt.resources()[0]?.status === 'exited' ? true : undefined))
    // 100 rows of history plus the 50-row screen, whose last row is the cursor's empty one.
    const all = rt.retainedLines(b.id)
    expect(all).toHaveLength(149)
    expect(all?.[0]).toBe('102')
    expect(all?.at(-1)).toBe('250')
    expect(rt.retainedLines('nope')).toBeNull()
    // retainedLines returned lines 102–250 but marked none as seen: the 101 evicted before them
    // are still dropped unseen, and the next read returns from the end as usual.
    const read = await rt.shell_logs({ id: b.id, n: 1 })
    expect(read).toMatchObject({ lines: ['250'], dropped_lines: 101 })
  })

  it('reads lines full of backspaces without blocking: 10,100 lines of 2047 characters and 2047 backspaces', async () => {
    const { rt } = makeRuntime()
    const b = await rt.shell_background({ commands: [`python3 -c "import sys; sys.stdout.write(('a' * 2047 + '\\b' * 2047 + '\\n') * 10100)"`] })
    await eventually(() => (rt.resources()[0]?.status === 'exited' ? true : undefined), 120_000)
    let started = performance.now()
    const r = await rt.shell_logs({ id: b.id, n: 2000 })
    const logsMs = performance.now() - started
    started = performance.now()
    const all = rt.retainedLines(b.id) ?? []
    const resourceMs = performance.now() - started
    // A backspace moves the cursor; it erases nothing: each line reads as its 2047 a's.
    expect(r.lines.at(-1)).toBe('a'.repeat(2047))
    expect(all.length).toBeGreaterThan(100)
    expect(logsMs).toBeLessThan(1500)
    expect(resourceMs).toBeLessThan(1500)
  }, 360_000)

  it('never waits', async () => {
    const { rt } = makeRuntime()
    const b = await rt.shell_background({ commands: ['sleep 1000'] })
    const started = performance.now()
    const r = await rt.shell_logs({ id: b.id })
    expect(performance.now() - started).toBeLessThan(1000)
    expect(r).toMatchObject({ lines: [], status: 'running', exit: null, dropped_lines: 0 })
  })

  it('loses no output at exit: seq 1 2000, 200 times, always ends with 2000', async () => {
    const { rt } = makeRuntime()
    let lost = 0
    // Five shells at a time, 40 rounds: each shell is a trial of its own of the race at exit (raw
    // node-pty lost the end of this output in about half of 200 runs).
    for (let round = 0; round < 40; round++) {
      await Promise.all(
        [0, 1, 2, 3, 4].map(async (k) => {
          const id = `seq-${round}-${k}`
          await rt.shell_background({ commands: ['seq 1 2000'], id })
          const r = await exited(rt, id)
          const { lines } = await rt.shell_logs({ id, n: 2000 })
          if (lines.length !== 2000 || lines.at(-1) !== '2000' || r.exit !== 0) lost++
          await rt.shell_stop({ id })
        }),
      )
    }
    expect(lost).toBe(0)
  }, 600_000)

  it('keeps an exited shell readable until it is stopped', async () => {
    const { rt } = makeRuntime()
    const b = await rt.shell_background({ commands: ['echo bye; exit 7'] })
    await exited(rt, b.id)
    await new Promise((r) => setTimeout(r, 200))
    expect(await rt.shell_logs({ id: b.id })).toMatchObject({ lines: ['bye'], status: 'exited', exit: 7 })
    expect(rt.resources()[0]).toMatchObject({ id: b.id, status: 'exited', exit: 7 })
    const stop = valid(shellStop, await rt.shell_stop({ id: b.id }))
    expect(stop).toMatchObject({ id: b.id, status: 'exited', exit: 7 })
    expect((await rejection(rt.shell_logs({ id: b.id }))).code).toBe('unknown_id')
  })

  it('writes every byte to the append-only log file', async () => {
    const { rt } = makeRuntime({ ringLines: 10 })
    const b = await rt.shell_background({ commands: ["printf 'a\\033[31mred\\033[0m\\n'; seq 1 100"] })
    await exited(rt, b.id)
    const log = readFileSync(rt.resources()[0]?.log_path as string, 'latin1')
    expect(log.startsWith('a\x1b[31mred\x1b[0m\r\n1\r\n')).toBe(true)
    expect(log.endsWith('99\r\n100\r\n')).toBe(true)
  })

  it('refuses an unknown id with unknown_id and a hint listing the live ids', async () => {
    const { rt } = makeRuntime()
    const none = await rejection(rt.shell_logs({ id: 'nope' }))
    expect(none.code).toBe('unknown_id')
    expect(none.hint).toContain('shell_background')
    await rt.shell_background({ commands: ['sleep 1000'], id: 'alpha' })
    const err = await rejection(rt.shell_logs({ id: 'nope' }))
    expect(err.hint).toContain('`alpha`')
    expect(err.is_preflight).toBe(true)
  })
})

describe('shell_type', () => {
  it('drives a Python REPL, read back with shell_logs', async () => {
    const { rt } = makeRuntime()
    const b = await rt.shell_background({ commands: ['python3 -i -q'] })
    await logsUntil(rt, b.id, (l) => l.at(-1) === '>>> ')
    const typed = valid(shellType, await rt.shell_type({ id: b.id, text: 'print(6 * 7)' }))
    expect(typed).toEqual({ id: b.id, text: 'print(6 * 7)', is_enter: true, status: 'running' })
    const lines = await logsUntil(rt, b.id, (l) => l.includes('42') && l.at(-1) === '>>> ')
    expect(lines).toEqual(['>>> print(6 * 7)', '42', '>>> '])
    await rt.shell_type({ id: b.id, text: 'x = 1', is_enter: false })
    await rt.shell_type({ id: b.id, text: '0; print(x + 1)' })
    await logsUntil(rt, b.id, (l) => l.includes('11'))
    await rt.shell_type({ id: b.id, text: 'exit()' })
    expect((await exited(rt, b.id)).exit).toBe(0)
  })

  it("passes a signal sent to the shell's pid on to its script, and a Ctrl-C typed at the terminal reaches the program once", async () => {
    const { rt } = makeRuntime()
    const b = await rt.shell_background({ commands: ["trap 'echo got USR1' USR1; echo ready; while :; do sleep 0.05; done"] })
    await logsUntil(rt, b.id, (l) => l.includes('ready'))
    process.kill(b.pid, 'SIGUSR1')
    await logsUntil(rt, b.id, (l) => l.includes('got USR1'))
    await rt.shell_stop({ id: b.id })
    // What started the job inside its cgroup is hands' own: a stop counts only the job's processes.
    const one = await rt.shell_background({ commands: ['sleep 600'] })
    await eventually(() => (readFileSync(`/proc/${one.pid}/task/${one.pid}/children`, 'latin1').trim() !== '' ? true : undefined))
    expect((await rt.shell_stop({ id: one.id })).note).toBe('Stopped 1 process with SIGTERM.')

    const py = await rt.shell_background({ commands: ['python3 -i -q'] })
    await logsUntil(rt, py.id, (l) => l.at(-1) === '>>> ')
    await rt.shell_type({ id: py.id, text: 'import time; time.sleep(30)' })
    await new Promise((r) => setTimeout(r, 300))
    await rt.shell_type({ id: py.id, text: '\u0003', is_enter: false })
    const lines = await logsUntil(rt, py.id, (l) => l.includes('KeyboardInterrupt') && l.at(-1) === '>>> ')
    await new Promise((r) => setTimeout(r, 300))
    const after = (await rt.shell_logs({ id: py.id, n: 50 })).lines
    expect(after.filter((l) => l.includes('KeyboardInterrupt'))).toHaveLength(1)
    expect(lines.at(-1)).toBe('>>> ')
    await rt.shell_type({ id: py.id, text: 'exit()' })
    expect((await exited(rt, py.id)).exit).toBe(0)
  })

  it('refuses a shell that is not running with not_running and a hint', async () => {
    const { rt } = makeRuntime()
    const b = await rt.shell_background({ commands: ['true'] })
    await exited(rt, b.id)
    const err = await rejection(rt.shell_type({ id: b.id, text: 'hello' }))
    expect(err.code).toBe('not_running')
    expect(err.hint).toContain('shell_logs')
    expect((await rejection(rt.shell_type({ id: 'ghost', text: '' }))).code).toBe('unknown_id')
  })
})

describe('shell_stop', () => {
  // A double signal shows in only some stops (the two may merge): 15 shells, each stopped on its own,
  // so a regression shows. They run side by side: each stop waits out its grace.
  it('signals a trapping script once: its TERM trap runs exactly once (15 shells)', async () => {
    // The grace is what the trap has to run before SIGKILL: generous, for a machine busy with other work.
    const { rt, root } = makeRuntime({ stopGraceMs: 1000 })
    const trapped = await Promise.all(
      Array.from({ length: 15 }, async (_, k) => {
        const file = join(root, `trapped-${k}`)
        const b = await rt.shell_background({ commands: [`trap 'echo trapped >> ${file}' TERM; echo ready; while :; do sleep 0.05; done`] })
        await logsUntil(rt, b.id, (l) => l.includes('ready'))
        const stop = await rt.shell_stop({ id: b.id })
        expect(stop.note).toContain('SIGKILL')
        return readFileSync(file, 'utf8')
      }),
    )
    expect(trapped).toEqual(Array(15).fill('trapped\n'))
  })

  it('kills a grandchild that called setsid', async () => {
    const { rt } = makeRuntime()
    const b = await rt.shell_background({ commands: [`bash ${FIXTURES}/setsid-grandchild.sh`] })
    const lines = await logsUntil(rt, b.id, (l) => l.includes('parent ready'))
    const grandchild = Number(lines.find((l) => l.startsWith('grandchild '))?.split(' ')[1])
    expect(alive(grandchild)).toBe(true)
    const r = valid(shellStop, await rt.shell_stop({ id: b.id }))
    expect(r).toMatchObject({ id: b.id, status: 'stopped', exit: 143 })
    expect(alive(grandchild)).toBe(false)
    expect(alive(b.pid)).toBe(false)
    expect(r.note).toContain('SIGTERM')
  })

  it('kills the whole tree: setsid, nohup, double fork and SIGTERM ignorers', async () => {
    const { rt } = makeRuntime({ stopGraceMs: 300 })
    const b = await rt.shell_background({ commands: [`bash ${FIXTURES}/tree.sh`] })
    const lines = await logsUntil(rt, b.id, (l) => l.includes('tree ready'))
    const pids = lines.filter((l) => l.startsWith('pid ')).map((l) => Number(l.slice(4)))
    expect(pids.length).toBeGreaterThanOrEqual(5)
    for (const p of pids) expect(alive(p)).toBe(true)
    const r = await rt.shell_stop({ id: b.id })
    for (const p of pids) expect(alive(p)).toBe(false)
    expect(r.note).toContain('SIGKILL')
    expect(rt.resources()).toEqual([])
  })

  it('stops an exited shell, kills what it left running, and reports exited', async () => {
    const { rt } = makeRuntime()
    const b = await rt.shell_background({ commands: ['setsid sleep 1000 > /dev/null 2>&1 & echo "pid $!"; sleep 0.5'] })
    await exited(rt, b.id)
    const pid = Number((await rt.shell_logs({ id: b.id })).lines[0]?.slice(4))
    expect(alive(pid)).toBe(true)
    const r = await rt.shell_stop({ id: b.id })
    expect(r).toMatchObject({ status: 'exited', exit: 0 })
    expect(alive(pid)).toBe(false)
  })
})

describe('resources', () => {
  it('lists live and exited shells and tells listeners when the list changes', async () => {
    const { rt, root } = makeRuntime()
    const seen: number[] = []
    rt.onResourcesChanged((list) => seen.push(list.length))
    const a = await rt.shell_background({ commands: ['sleep 1000'] })
    const b = await rt.shell_background({ commands: ['echo done'] })
    await exited(rt, b.id)
    const list = rt.resources()
    expect(list).toHaveLength(2)
    expect(list.find((s) => s.id === a.id)).toMatchObject({ commands: ['sleep 1000'], cwd: root, pid: a.pid, status: 'running', exit: null })
    expect(list.find((s) => s.id === b.id)).toMatchObject({ status: 'exited', exit: 0 })
    expect(Number.isNaN(Date.parse(list[0]?.started_at as string))).toBe(false)
    await rt.shell_stop({ id: a.id })
    expect(seen.at(-1)).toBe(1)
    expect(seen.length).toBeGreaterThanOrEqual(4)
  })

  it('runs 50 background shells at once and stops them all', async () => {
    const { rt } = makeRuntime({ maxShells: 50 })
    const shells = await Promise.all(Array.from({ length: 50 }, (_, i) => rt.shell_background({ commands: [`echo "shell ${i}"; sleep 1000`], id: `s${i}` })))
    expect(new Set(shells.map((s) => s.pid)).size).toBe(50)
    for (const [i, s] of shells.entries()) await logsUntil(rt, s.id, (l) => l.includes(`shell ${i}`))
    expect(rt.resources().filter((r) => r.status === 'running')).toHaveLength(50)
    await Promise.all(shells.map((s) => rt.shell_stop({ id: s.id })))
    for (const s of shells) expect(alive(s.pid)).toBe(false)
  }, 240_000)
})
