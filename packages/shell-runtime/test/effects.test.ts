/**
 * Each command's result says what it changed on disk, exactly: the relay sees every call of the
 * job's tree that can change the filesystem, and the host compares what stood at each path before
 * with what stands there at the end. Run through shell_run and shell_background, under every
 * confinement mechanism that works here and with confinement off (observed as root).
 */
import { spawn } from 'node:child_process'
import { chmodSync, chownSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { shellLogs, shellRun, shellStop, type Changes } from '@hands/contracts'
import type { ShellRuntime } from '@hands/shell-runtime'
import { describe, expect, it } from 'vitest'
import { eventually, hostArgv, logsUntil, makeRuntime, MECHANISMS, tempDir, valid } from './helpers.ts'

const isRoot = process.getuid?.() === 0
/** Off is observed only when hands runs as root (see docs/effects.md). */
const MODES = [...MECHANISMS, ...(isRoot ? (['off'] as const) : [])]

/** The parts of an account a test states: what is named, counted, and whether it is complete. */
function account(c: Changes) {
  return { created: c.created, modified: c.modified, deleted: c.deleted, renamed: c.renamed, counts: c.counts, outside_roots: c.outside_roots }
}
const none = { created: [], modified: [], deleted: [], renamed: [], counts: { created: 0, modified: 0, deleted: 0, renamed: 0 }, outside_roots: 0 }
const only = (kind: 'created' | 'modified' | 'deleted', ...paths: string[]) => ({
  ...none,
  [kind]: paths,
  counts: { ...none.counts, [kind]: paths.length },
})
const renamed = (...pairs: Array<[string, string]>) => ({
  ...none,
  renamed: pairs.map(([from, to]) => ({ from, to })),
  counts: { ...none.counts, renamed: pairs.length },
})

/** Reads a background shell until a line says `mark`, gathering what each read reported (each read reports only what is new). */
async function readUntil(rt: ShellRuntime, id: string, mark: string) {
  let isFinal = false
  const seen = {
    ...none,
    created: [] as string[],
    modified: [] as string[],
    deleted: [] as string[],
    renamed: [] as Changes['renamed'],
    counts: { ...none.counts },
  }
  await eventually(
    async () => {
      const r = valid(shellLogs, await rt.shell_logs({ id, n: 50 }))
      expect(r.changes.note).toBeNull()
      seen.created.push(...r.changes.created)
      seen.modified.push(...r.changes.modified)
      seen.deleted.push(...r.changes.deleted)
      seen.renamed.push(...r.changes.renamed)
      for (const k of ['created', 'modified', 'deleted', 'renamed'] as const) seen.counts[k] += r.changes.counts[k]
      if (!r.lines.includes(mark)) return undefined
      // The relay writes its record within 100 ms of a change: a read right after the mark may
      // leave the last changes to the next read.
      if (isFinal) return true
      isFinal = true
      await sleep(300)
      return undefined
    },
    30_000,
    mark,
  )
  return seen
}

/** Each line, what the root holds before it (made by the test), and the account it must get. */
function table(root: string, second: string, outside: string | null) {
  const file = (rel: string, text = 'old\n') => {
    mkdirSync(join(root, rel, '..'), { recursive: true })
    writeFileSync(join(root, rel), text)
  }
  file('append.txt')
  file('truncate.txt')
  file('delete.txt')
  file('rename-from.txt')
  file('across/from.txt')
  mkdirSync(join(root, 'across-to'))
  file('over/a.txt', 'a\n')
  file('over/b.txt', 'b\n')
  mkdirSync(join(root, 'empty-dir'))
  file('chmod.txt')
  chmodSync(join(root, 'chmod.txt'), 0o644)
  mkdirSync(join(root, 'chmod-dir'))
  chmodSync(join(root, 'chmod-dir'), 0o755)
  file('touch.txt')
  file('mmap.bin', 'x'.repeat(4096))
  file('hard-src.txt')
  file('rewrite.txt', 'same\n')
  file('tree/a/1.txt')
  file('tree/a/2.txt')
  symlinkSync('append.txt', join(root, 'old-link'))
  return [
    { line: 'echo hi > created.txt', want: only('created', 'created.txt') },
    { line: 'echo more >> append.txt', want: only('modified', 'append.txt') },
    { line: ': > truncate.txt', want: only('modified', 'truncate.txt') },
    { line: 'rm delete.txt', want: only('deleted', 'delete.txt') },
    { line: 'mv rename-from.txt rename-to.txt', want: renamed(['rename-from.txt', 'rename-to.txt']) },
    { line: 'mv across/from.txt across-to/to.txt', want: renamed(['across/from.txt', 'across-to/to.txt']) },
    // Over an existing file: the old b.txt is gone, a.txt's entry stands at its name.
    { line: 'mv over/a.txt over/b.txt', want: renamed(['over/a.txt', 'over/b.txt']) },
    { line: 'mkdir made-dir', want: only('created', 'made-dir/') },
    { line: 'rmdir empty-dir', want: only('deleted', 'empty-dir/') },
    { line: 'ln -s created.txt link', want: only('created', 'link') },
    { line: 'ln -sfn truncate.txt old-link', want: only('modified', 'old-link') },
    { line: 'ln hard-src.txt hard.txt', want: only('created', 'hard.txt') },
    { line: 'chmod 600 chmod.txt', want: only('modified', 'chmod.txt') },
    { line: 'chmod 700 chmod-dir', want: only('modified', 'chmod-dir/') },
    { line: 'touch -d 2001-01-01 touch.txt', want: only('modified', 'touch.txt') },
    { line: 'echo same > rewrite.txt', want: only('modified', 'rewrite.txt') },
    // Writes through a shared memory map: the file was opened to write, its times changed.
    {
      line: `python3 -c "import mmap,os,time; f=open('mmap.bin','r+b'); m=mmap.mmap(f.fileno(),0); time.sleep(0.02); m[0:1]=b'y'; m.flush()"`,
      want: only('modified', 'mmap.bin'),
    },
    // A child's write, one started with &, and a daemon that outlives the line (stopped at its end).
    { line: `bash -c 'echo c > child.txt'`, want: only('created', 'child.txt') },
    { line: `(echo a > amp.txt) & wait`, want: only('created', 'amp.txt') },
    { line: `setsid bash -c 'echo d > daemon.txt; exec sleep 1000' & sleep 0.3`, want: only('created', 'daemon.txt') },
    // Made and removed again within the line: nothing to report.
    { line: 'echo t > fleeting.txt && rm fleeting.txt', want: none },
    // A directory made with what it holds: the directory is named, its contents counted.
    { line: 'mkdir -p deep/x/y && touch deep/x/y/f deep/g', want: { ...none, created: ['deep/'], counts: { ...none.counts, created: 5 } } },
    { line: 'rm -r tree', want: { ...none, deleted: ['tree/'], counts: { ...none.counts, deleted: 4 } } },
    // Past the listed paths: the first ten named, all counted.
    {
      line: 'for i in $(seq -w 1 25); do echo $i > many-$i.txt; done',
      want: { ...none, created: Array.from({ length: 10 }, (_, i) => `many-${String(i + 1).padStart(2, '0')}.txt`), counts: { ...none.counts, created: 25 } },
    },
    // A second root, outside the workspace: named by its absolute path. The session's TMPDIR is the job's scratch.
    { line: `echo o > ${second}/out.txt; echo t > "$TMPDIR/scratch.txt"`, want: only('created', `${second}/out.txt`) },
    // Outside the roots (only confinement off lets a command write there): counted, not named.
    ...(outside === null ? [] : [{ line: `echo o > ${outside}/out.txt`, want: { ...none, outside_roots: 1 } }]),
    // Reading changes nothing.
    { line: 'cat append.txt > /dev/null; ls -R > /dev/null', want: none },
  ]
}

describe.each(MODES)('what each command changed on disk (%s)', (confine) => {
  it('names each change exactly: create, append, truncate, delete, rename within and across directories, mkdir, rmdir, symlink, hard link, chmod, times, mmap, a child, &, a daemon', async () => {
    const root = tempDir('workspace')
    const second = tempDir('second-root')
    const { rt } = makeRuntime({ confine, roots: [root, second] })
    const cases = table(root, second, confine === 'off' ? tempDir('outside') : null)
    const r = valid(shellRun, await rt.shell_run({ commands: cases.map((c) => c.line), cwd: root }))
    for (const [i, c] of cases.entries()) {
      const got = r.commands[i]
      expect(got?.exit, `${c.line}: ${got?.stderr}`).toBe(0)
      expect({ line: c.line, ...account(got!.changes) }).toEqual({ line: c.line, ...c.want })
      expect(got!.changes.is_complete, c.line).toBe(true)
      expect(got!.changes.note, c.line).toBeNull()
    }
    expect(readFileSync(join(root, 'mmap.bin'), 'latin1').charAt(0)).toBe('y')
  })

  it('names each change of the same table exactly when each line runs as a background shell (shell_stop’s total)', async () => {
    const root = tempDir('workspace')
    const second = tempDir('second-root')
    const { rt } = makeRuntime({ confine, roots: [root, second] })
    const cases = table(root, second, confine === 'off' ? tempDir('outside') : null)
    // Eight shells at a time (the session's cap is 16), each waited for until it exits, then stopped.
    for (let at = 0; at < cases.length; at += 8) {
      const batch = cases.slice(at, at + 8)
      const shells = await Promise.all(batch.map((c) => rt.shell_background({ commands: [c.line], cwd: root })))
      for (const [i, c] of batch.entries()) {
        const id = shells[i]!.id
        await eventually(async () => ((await rt.shell_logs({ id })).status === 'exited' ? true : undefined), 30_000, `${c.line} to exit`)
        const stop = valid(shellStop, await rt.shell_stop({ id }))
        expect(stop.exit, c.line).toBe(0)
        expect({ line: c.line, ...account(stop.changes) }).toEqual({ line: c.line, ...c.want })
        expect(stop.changes.note, c.line).toBeNull()
      }
    }
  })
})

describe.each(MODES)('a workspace on /dev/shm (%s)', (confine) => {
  it('is disk like any other: its changes are named (only the kernel’s own /dev, /proc and /sys are left out)', async () => {
    const root = tempDir('shm', '/dev/shm')
    writeFileSync(join(root, 'gone.txt'), 'g\n')
    const { rt } = makeRuntime({ confine, roots: [root] })
    // Unconfined, a write to /dev/shm outside the roots is counted as outside, like one anywhere else.
    const outside = confine === 'off' ? `; echo o > ${tempDir('shm-outside', '/dev/shm')}/o.txt` : ''
    const r = valid(shellRun, await rt.shell_run({ commands: [`echo x > made.txt && mkdir d && rm gone.txt && echo y > /dev/null${outside}`], cwd: root }))
    const c = r.commands[0]!.changes
    expect(account(c)).toEqual({
      ...none,
      created: ['made.txt', 'd/'],
      deleted: ['gone.txt'],
      counts: { ...none.counts, created: 2, deleted: 1 },
      outside_roots: outside ? 1 : 0,
    })
    expect(c.is_complete).toBe(true)
  })
})

describe.each(MODES)('a background shell changing files without pause (%s)', (confine) => {
  it('has its changes read while it runs: the record is written within 100 ms of a change, however often the next one comes', async () => {
    const { rt } = makeRuntime({ confine })
    const bg = await rt.shell_background({ commands: ['for i in $(seq 1 50); do echo $i > w-$i.txt; sleep 0.02; done; echo done; sleep 1000'] })
    let seenBeforeDone = 0
    await eventually(
      async () => {
        const r = await rt.shell_logs({ id: bg.id, n: 5 })
        if (r.lines.includes('done')) return true
        seenBeforeDone += r.changes.counts.created
        await sleep(50)
        return undefined
      },
      30_000,
      'done',
    )
    expect(seenBeforeDone).toBeGreaterThan(0)
  })
})

describe.each(MODES)('a job past its first 64 supervised calls (%s)', (confine) => {
  it('is answered by the relay’s supervising thread just as exactly: changes read mid-way, a rename, the total, and (Landlock) a call naming a process outside the job', async () => {
    const root = tempDir('workspace')
    const { rt } = makeRuntime({ confine, roots: [root] })
    // Only the Landlock supervisor answers calls that name a process; unconfined, this would reach the test's own process.
    const guard = confine === 'landlock' ? `; prlimit --pid ${process.pid} --nofile=64:64 2>/dev/null && echo reached || echo refused` : ''
    const bg = await rt.shell_background({
      commands: [
        `for i in $(seq 1 300); do echo $i > f-$i.txt; done${guard}; echo phase-1; read; rm f-2.txt; mv f-1.txt moved.txt; mkdir d; echo phase-2; sleep 1000`,
      ],
      cwd: root,
    })
    const first = await readUntil(rt, bg.id, 'phase-1')
    expect(first.counts).toEqual({ created: 300, modified: 0, deleted: 0, renamed: 0 })
    // Each read names its first ten: f-1.txt … f-10.txt come first, whatever the reads were.
    expect(first.created.slice(0, 10)).toEqual(Array.from({ length: 10 }, (_, i) => `f-${i + 1}.txt`))
    if (guard) expect((await rt.shell_logs({ id: bg.id, n: 50 })).lines).toContain('refused')
    await rt.shell_type({ id: bg.id, text: '', is_enter: true })
    expect(await readUntil(rt, bg.id, 'phase-2')).toEqual({
      ...none,
      created: ['d/'],
      deleted: ['f-2.txt'],
      renamed: [{ from: 'f-1.txt', to: 'moved.txt' }],
      counts: { created: 1, modified: 0, deleted: 1, renamed: 1 },
    })
    // The total, against what stood before the shell: f-3 … f-300, moved.txt and d/ are new.
    const stop = valid(shellStop, await rt.shell_stop({ id: bg.id }))
    expect(stop.changes.counts).toEqual({ created: 300, modified: 0, deleted: 0, renamed: 0 })
    expect(stop.changes.is_complete).toBe(true)
  })
})

describe.each(MODES)('whose changes they are (%s)', (confine) => {
  it('a change belongs to the call whose tree made it: not to a concurrent call, nor to a background shell running meanwhile', async () => {
    const { rt } = makeRuntime({ confine })
    const bg = await rt.shell_background({ commands: ['for i in $(seq 1 40); do echo $i > bg-$i.txt; sleep 0.05; done; echo done; sleep 1000'] })
    const [a, b] = await Promise.all([
      rt.shell_run({ commands: ['for i in 1 2 3 4 5; do echo a > a-$i.txt; sleep 0.1; done'] }),
      rt.shell_run({ commands: ['for i in 1 2 3 4 5; do echo b > b-$i.txt; sleep 0.1; done'] }),
    ])
    const names = (n: string) => [1, 2, 3, 4, 5].map((i) => `${n}-${i}.txt`)
    expect(a.commands[0]?.changes.created).toEqual(names('a'))
    expect(b.commands[0]?.changes.created).toEqual(names('b'))
    await logsUntil(rt, bg.id, (lines) => lines.includes('done'), 60_000)
    const stop = valid(shellStop, await rt.shell_stop({ id: bg.id }))
    expect(stop.changes.counts.created).toBe(40)
    expect(stop.changes.created).toEqual(Array.from({ length: 10 }, (_, i) => `bg-${i + 1}.txt`))
    expect(stop.changes.is_complete).toBe(true)
  })
})

describe.each(MODES)('a background shell’s changes, read by read (%s)', (confine) => {
  it('shell_logs says what changed since the previous read, and shell_stop the total', async () => {
    const root = tempDir('workspace')
    writeFileSync(join(root, 'm.txt'), 'old\n')
    const { rt } = makeRuntime({ confine, roots: [root] })
    const bg = await rt.shell_background({
      commands: ['echo one > a.txt; echo more >> m.txt; echo phase-1; read; mv a.txt b.txt; rm m.txt; echo c > c.txt; echo phase-2; sleep 1000'],
      cwd: root,
    })
    expect(await readUntil(rt, bg.id, 'phase-1')).toEqual({
      ...none,
      created: ['a.txt'],
      modified: ['m.txt'],
      counts: { ...none.counts, created: 1, modified: 1 },
    })
    await rt.shell_type({ id: bg.id, text: '', is_enter: true })
    expect(await readUntil(rt, bg.id, 'phase-2')).toEqual({
      ...none,
      created: ['c.txt'],
      deleted: ['m.txt'],
      renamed: [{ from: 'a.txt', to: 'b.txt' }],
      counts: { created: 1, modified: 0, deleted: 1, renamed: 1 },
    })
    // Nothing new since: an empty account.
    expect(account((await rt.shell_logs({ id: bg.id })).changes)).toEqual(none)
    // The total compares with what stood before the shell started: a.txt never stood, so b.txt is new.
    const stop = valid(shellStop, await rt.shell_stop({ id: bg.id }))
    expect(account(stop.changes)).toEqual({ ...none, created: ['b.txt', 'c.txt'], deleted: ['m.txt'], counts: { ...none.counts, created: 2, deleted: 1 } })
  })
})

describe('what the observer cannot see, it says', () => {
  it('without a seccomp supervisor, each result says its changes were not observed, and the summary names the gap', async () => {
    const saved = process.env.HANDS_CONFINE_UNAVAILABLE
    process.env.HANDS_CONFINE_UNAVAILABLE = 'supervisor'
    let made
    try {
      made = makeRuntime({ confine: MECHANISMS[0] ?? 'off' })
    } finally {
      if (saved === undefined) delete process.env.HANDS_CONFINE_UNAVAILABLE
      else process.env.HANDS_CONFINE_UNAVAILABLE = saved
    }
    const { rt } = made
    const r = await rt.shell_run({ commands: ['echo x > x.txt'] })
    const c = r.commands[0]!.changes
    expect(c.is_complete).toBe(false)
    expect(c.note).toMatch(/^Not observed: /)
    expect(c.counts).toEqual({ created: 0, modified: 0, deleted: 0, renamed: 0 })
    expect(rt.confinement.summary).toMatch(/gap: what commands change on disk is not reported/)
  })

  it('a host that leaves the observer out gets results that say so', async () => {
    const { rt } = makeRuntime({ confine: MODES[0] ?? 'off', changes: false })
    const c = (await rt.shell_run({ commands: ['echo x > x.txt'] })).commands[0]!.changes
    expect(c).toMatchObject({ created: [], is_complete: false, note: 'Not observed: the host switched the account of changes off.' })
    expect(rt.confinement.summary).toMatch(/gap: what commands change on disk is not reported \(the host switched the account of changes off\)/)
    expect(() => makeRuntime({ changes: 'no' as unknown as boolean })).toThrow('changes must be true or false (got no)')
  })

  it('an observed session says so in its summary', () => {
    const { rt } = makeRuntime({ confine: MODES[0] ?? 'off' })
    expect(rt.confinement.summary).toMatch(
      /changes on disk: each command's, seen by the helper as it makes them, are in its result; a program that races its own threads against the helper can hide a change/,
    )
  })
})

describe.skipIf(!isRoot)('as an unprivileged user', () => {
  const NOBODY = 65534
  function host(confine: string): Promise<{ exit: number; stderr: string; changes: Changes; summary: string }> {
    const root = tempDir('effects-nobody')
    writeFileSync(join(root, 'gone.txt'), 'g\n')
    chownSync(root, NOBODY, NOBODY)
    chownSync(join(root, 'gone.txt'), NOBODY, NOBODY)
    const argv = ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', ...hostArgv('effects-host', [confine, root])]
    const [file, ...args] = argv as [string, ...string[]]
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOME: root } })
    let out = ''
    let err = ''
    child.stdout?.on('data', (d: Buffer) => (out += d))
    child.stderr?.on('data', (d: Buffer) => (err += d))
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 120_000)
      child.once('close', (code) => {
        clearTimeout(timer)
        if (code !== 0) reject(new Error(`the host exited ${code}: ${err}`))
        else resolve(JSON.parse(out))
      })
    })
  }

  it.each(MECHANISMS)('confined by %s, an ordinary user’s commands are observed exactly', async (confine) => {
    const r = await host(confine)
    expect(r.exit, r.stderr).toBe(0)
    expect(account(r.changes)).toEqual({
      ...none,
      created: ['d/'],
      deleted: ['gone.txt'],
      counts: { ...none.counts, created: 2, deleted: 1 },
    })
    expect(r.changes.is_complete).toBe(true)
  })

  it('unconfined, an ordinary user’s commands are not observed, and each result says so', async () => {
    const r = await host('off')
    expect(r.exit, r.stderr).toBe(0)
    expect(r.changes.is_complete).toBe(false)
    expect(r.changes.note).toBe('Not observed: commands run unconfined, and seeing their calls would take no_new_privs, which stops sudo.')
    expect(r.summary).toMatch(/gap: what commands change on disk is not reported \(commands run unconfined/)
  })
})

/**
 * In a directory the command itself made, the relay records a path as new without looking (see
 * docs/effects.md). These lines move directories into, over and back to made ones, lead out of
 * made ones by symlinks, make directories that fail, nest them and reach them through the working
 * directory: each account is what looking at each path finds, as when the relay always looked.
 */
function madeDirs(root: string, outside: string) {
  const file = (rel: string, text = 'old\n') => {
    mkdirSync(join(root, rel, '..'), { recursive: true })
    writeFileSync(join(root, rel), text)
  }
  for (const rel of ['e1/f', 'e2/f', 'out3/f', 'e4/f', 'x6/f', 'e8/d/f', 'e12/f', 'e14/d/f']) file(rel)
  writeFileSync(join(outside, 'f'), 'old\n')
  const counts = (created: number, modified: number, renamedCount = 0) => ({ created, modified, deleted: 0, renamed: renamedCount })
  return [
    // A directory with files moved into a made one, over a made (empty) one, and to a made one's name after it was moved away.
    {
      line: 'mkdir d1 && mv e1 d1/e1 && echo more >> d1/e1/f',
      want: { ...none, created: ['d1/'], modified: ['d1/e1/f'], renamed: [{ from: 'e1/', to: 'd1/e1/' }], counts: counts(1, 1, 1) },
    },
    {
      line: 'mkdir d2 && mv -T e2 d2 && echo more >> d2/f',
      want: { ...none, modified: ['d2/f'], renamed: [{ from: 'e2/', to: 'd2/' }], counts: counts(0, 1, 1) },
    },
    {
      line: 'mkdir d4 && mv d4 d4-away && mv e4 d4 && echo more >> d4/f',
      want: { ...none, created: ['d4-away/'], modified: ['d4/f'], renamed: [{ from: 'e4/', to: 'd4/' }], counts: counts(1, 1, 1) },
    },
    // A symlink in a made directory leading out of it, to a directory of the root and to another
    // root: what changes is named where it is, not by the link it was reached through.
    {
      line: 'mkdir d3 && ln -s ../out3 d3/l && echo more >> d3/l/f && echo new > d3/l/g',
      want: { ...none, created: ['d3/', 'out3/g'], modified: ['out3/f'], counts: counts(3, 1) },
    },
    {
      line: `mkdir d5 && ln -s ${outside} d5/l && echo more >> d5/l/f`,
      want: { ...none, created: ['d5/'], modified: [join(outside, 'f')], counts: counts(2, 1) },
    },
    // Nested made directories, and a made directory reached through the working directory.
    { line: 'mkdir -p n1/n2/n3 && echo x > n1/n2/n3/f && echo y > n1/n2/g && mkdir n1/n2/n3/n4', want: { ...none, created: ['n1/'], counts: counts(6, 0) } },
    {
      line: 'mkdir c5 && cd c5 && echo x > f && mkdir sub && cd sub && echo y > g && cd ../.. && echo z > c5/sub/h',
      want: { ...none, created: ['c5/'], counts: counts(5, 0) },
    },
    // A mkdir that fails: something stood there; its parent was missing and a move, or a symlink, brought one in.
    { line: 'mkdir x6 2>/dev/null; echo more >> x6/f', want: { ...none, modified: ['x6/f'], counts: counts(0, 1) } },
    {
      line: 'mkdir m8/d 2>/dev/null; mv e8 m8 && echo more >> m8/d/f',
      want: { ...none, created: ['m8/d/'], modified: ['m8/d/f'], renamed: [{ from: 'e8/', to: 'm8/' }], counts: counts(1, 1, 1) },
    },
    // The mkdir failed (no m14); the link made after brings e14 in under that name: e14's file changed.
    {
      line: 'mkdir m14/d 2>/dev/null; ln -s e14 m14 && echo more >> m14/d/f',
      want: { ...none, created: ['m14'], modified: ['e14/d/f'], counts: counts(1, 1) },
    },
    // A made directory reached through a symlink the command made, and one made again after rmdir.
    {
      line: 'mkdir d9 && ln -s d9 s9 && echo x > s9/f && echo more >> d9/f',
      want: { ...none, created: ['d9/', 's9'], counts: counts(3, 0) },
    },
    { line: 'mkdir d12 && rmdir d12 && cp -r e12 d12 && echo more >> d12/f', want: { ...none, created: ['d12/'], counts: counts(2, 0) } },
  ]
}

/**
 * A symlink that stood before the command and leads to where it makes a directory is the one way
 * a command names a file in its own directory first by another name. Looking would find the file
 * there and call it modified; it did not stand before the command, and without a move, rmdir or
 * symlink of the command since the mkdir the account says created (see docs/effects.md).
 */
function throughOldSymlinks(root: string) {
  for (const [link, to] of [
    ['sa', 'da'],
    ['sb', 'db'],
    ['sc', 'dc'],
    ['sd', 'dd'],
    ['se', 'de/sub'],
    ['sg', 'dg'],
    ['sh', 'dh'],
  ] as const)
    symlinkSync(to, join(root, link))
  mkdirSync(join(root, 'x'))
  for (const name of ['z1', 'z3', 'zt']) writeFileSync(join(root, name), '')
  mkdirSync(join(root, 'ze'))
  // The file is named where it is (the link is not an entry of its own): the made directory holds it.
  const made = (dir: string) => ({ ...none, created: [`${dir}/`], counts: { ...none.counts, created: 2 } })
  const looked = made
  return [
    // Without a move since the mkdir (a move before it, by a process that has ended, or a plain unlink, void nothing).
    { line: 'mkdir da && echo x > sa/f && echo more >> da/f', want: made('da') },
    {
      line: 'mv z3 z4; mkdir db && echo x > sb/f && echo more >> db/f',
      want: { ...made('db'), renamed: [{ from: 'z3', to: 'z4' }], counts: { ...made('db').counts, renamed: 1 } },
    },
    { line: 'mkdir dd && rm zt && echo x > sd/f && echo more >> dd/f', want: { ...made('dd'), deleted: ['zt'], counts: { ...made('dd').counts, deleted: 1 } } },
    { line: 'mkdir -p de/sub && echo x > se/f && echo more >> de/sub/f', want: { ...none, created: ['de/'], counts: { ...none.counts, created: 3 } } },
    // A move, rmdir or symlink after the mkdir voids it, and a mkdir through ".." makes none: then the relay looks.
    {
      line: 'mkdir dc && mv z1 z2 && echo x > sc/f && echo more >> dc/f',
      want: { ...looked('dc'), renamed: [{ from: 'z1', to: 'z2' }], counts: { ...looked('dc').counts, renamed: 1 } },
    },
    {
      line: 'mkdir dg && rmdir ze && echo x > sg/f && echo more >> dg/f',
      want: { ...looked('dg'), deleted: ['ze/'], counts: { ...looked('dg').counts, deleted: 1 } },
    },
    { line: 'mkdir x/../dh && echo x > sh/f && echo more >> dh/f', want: looked('dh') },
  ]
}

describe.each(MODES)('in a directory the command made (%s)', (confine) => {
  it('names each change as looking finds it: files moved in, a directory moved over or back to its name, symlinks leading out or in, nested and relative made directories, a mkdir that failed', async () => {
    const root = tempDir('workspace')
    const outside = tempDir('second-root')
    const { rt } = makeRuntime({ confine, roots: [root, outside] })
    const cases = madeDirs(root, outside)
    const r = valid(shellRun, await rt.shell_run({ commands: cases.map((c) => c.line), cwd: root }))
    for (const [i, c] of cases.entries()) {
      const got = r.commands[i]
      expect(got?.exit, `${c.line}: ${got?.stderr}`).toBe(0)
      expect({ line: c.line, ...account(got!.changes) }).toEqual({ line: c.line, ...c.want })
      expect(got!.changes.is_complete, c.line).toBe(true)
    }
  })

  it('calls a file it made through a symlink that stood before, into its own new directory, created', async () => {
    const root = tempDir('workspace')
    const { rt } = makeRuntime({ confine, roots: [root] })
    const cases = throughOldSymlinks(root)
    const r = valid(shellRun, await rt.shell_run({ commands: cases.map((c) => c.line), cwd: root }))
    for (const [i, c] of cases.entries()) {
      const got = r.commands[i]
      expect(got?.exit, `${c.line}: ${got?.stderr}`).toBe(0)
      expect({ line: c.line, ...account(got!.changes) }).toEqual({ line: c.line, ...c.want })
      expect(got!.changes.is_complete, c.line).toBe(true)
    }
  })
})
