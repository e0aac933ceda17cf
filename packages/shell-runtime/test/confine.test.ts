import { execFileSync, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { createServer, type AddressInfo } from 'node:net'
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { packageDir } from '../../sandbox/src/confine/probe.ts'
import { ToolError } from '@hands/contracts'
import { tmpdir } from 'node:os'
import { describeConfinement } from '../src/index.ts'
import { eventually, logsUntil, makeRuntime, MECHANISMS, tempDir } from './helpers.ts'

const HELPER = join(packageDir(), 'native', 'bin', `${process.platform}-${process.arch}`, 'hands-confine')
import type { ShellRuntime, ShellRuntimeOptions } from '../src/index.ts'

const mechanisms = MECHANISMS

/** A hash of every name, type, mode, size, content and link target under `dir`. */
function treeHash(dir: string): string {
  const h = createHash('sha256')
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name)
      const st = lstatSync(p)
      h.update(`${p}\0${st.mode}\0${st.size}\0`)
      if (st.isSymbolicLink()) h.update(readlinkSync(p))
      else if (st.isDirectory()) walk(p)
      else h.update(readFileSync(p))
    }
  }
  walk(dir)
  return h.digest('hex')
}

/**
 * A parent directory holding the root `a`, its prefix sibling `ab` and an `outside` tree, each
 * with sentinel files; `root/escape` is a symlink to `outside`. It lives in /var/tmp, outside
 * the /tmp that bubblewrap replaces, so the outside tree is visible (and read-only) there too.
 */
function layout() {
  const parent = tempDir('confine', existsSync('/var/tmp') ? '/var/tmp' : undefined)
  const root = join(parent, 'a')
  const sibling = join(parent, 'ab')
  const out = join(parent, 'outside')
  for (const d of [root, sibling, out, join(out, 'd'), join(out, 'emptydir')]) mkdirSync(d)
  writeFileSync(join(out, 'f1'), 'sentinel\n')
  writeFileSync(join(out, 'd', 'f2'), 'sentinel 2\n')
  symlinkSync(join(out, 'f1'), join(out, 'link'))
  writeFileSync(join(sibling, 'f3'), 'sibling\n')
  writeFileSync(join(root, 'inside'), 'mine\n')
  symlinkSync(out, join(root, 'escape'))
  const hash = () => `${treeHash(out)}:${treeHash(sibling)}:${readdirSync(parent).sort().join(',')}`
  return { parent, root, sibling, out, hash }
}

/** Every way a command could write outside the root; `$OUT`, `$SIB` and `$REL` (outside, relative to /) are filled in. */
const OUTSIDE: Array<[string, string]> = [
  ['write', 'echo x > $OUT/new-file'],
  ['append', 'echo x >> $OUT/f1'],
  ['truncate by redirection', ': > $OUT/f1'],
  ['truncate(2)', 'truncate -s 0 $OUT/f1'],
  ['create', 'touch $OUT/created'],
  ['mkdir', 'mkdir $OUT/newdir'],
  ['rename out of the outside tree into the root', 'mv $OUT/f1 moved-in'],
  ['rename out of the root', 'mv inside $OUT/moved-out'],
  ['unlink', 'rm $OUT/f1'],
  ['rmdir', 'rmdir $OUT/emptydir'],
  ['symlink in the root, then write through it', 'ln -s $OUT/f1 made-link && echo x > made-link'],
  ['hard link of an outside file, then write', 'ln $OUT/f1 hard; echo x >> hard'],
  ['cp', 'cp inside $OUT/copied'],
  ['mv of a directory', 'mv $OUT/d $OUT/d2'],
  ['rm -rf', 'rm -rf $OUT'],
  ['tee', 'echo x | tee $OUT/teed'],
  ['dd', 'dd if=/dev/zero of=$OUT/f1 bs=1 count=1 conv=notrunc status=none'],
  ['python3 open', `python3 -c "open('$OUT/py', 'w').write('x')"`],
  ['a .. path', 'echo x > ../outside/dotdot'],
  ['a symlink in the root that points outside', 'echo x > escape/f1; touch escape/via-link'],
  ['cd / then a relative write', 'cd / && echo x > $REL/from-slash'],
  ['a sibling that shares the prefix', 'echo x > $SIB/f3; touch $SIB/new'],
  ['a setsid grandchild', 'setsid sh -c "echo x > $OUT/setsid-child" & wait'],
  ['a background job that keeps writing', '(for i in 1 2 3 4 5; do echo x >> $OUT/late; sleep 0.05; done) & sleep 0.4'],
]

/** The same kinds of writes inside the root (and its TMPDIR), each with what it must leave behind. */
const INSIDE: Array<[string, string, string, string]> = [
  ['write', 'echo x > w', 'w', 'x\n'],
  ['append', 'echo a > ap && echo b >> ap', 'ap', 'a\nb\n'],
  ['truncate', 'echo long > t && truncate -s 2 t', 't', 'lo'],
  ['create and mkdir', 'mkdir -p sub/deeper && touch sub/deeper/c && echo ok > sub/r', 'sub/r', 'ok\n'],
  ['rename', 'echo r > r1 && mv r1 r2', 'r2', 'r\n'],
  ['unlink and rmdir', 'echo u > u && rm u && mkdir e && rmdir e && echo gone > ur', 'ur', 'gone\n'],
  ['symlink and write through it', 'echo s > target && ln -s target sl && echo more >> sl', 'target', 's\nmore\n'],
  ['hard link', 'echo h > h1 && ln h1 h2 && echo 2 >> h2', 'h1', 'h\n2\n'],
  ['cp, mv, rm -rf', 'mkdir -p tree/x && echo c > tree/x/f && cp -r tree tree2 && mv tree2 tree3 && rm -rf tree && cat tree3/x/f > crm', 'crm', 'c\n'],
  ['tee and dd', 'echo t | tee te >/dev/null && dd if=te of=dd status=none', 'dd', 't\n'],
  ['python3 open', `python3 -c "open('py', 'w').write('p')"`, 'py', 'p'],
  ['a .. path that stays inside', 'mkdir -p s2 && echo d > s2/../dotdot', 'dotdot', 'd\n'],
  ['TMPDIR', 'echo tmp > "$TMPDIR/t" && cat "$TMPDIR/t" > fromtmp', 'fromtmp', 'tmp\n'],
  ['cd to the root by absolute path, then a relative write', 'cd "$ROOT" && cd / && cd "$ROOT" && echo abs > abs', 'abs', 'abs\n'],
  ['a setsid grandchild', 'setsid sh -c "echo g > grand" & wait', 'grand', 'g\n'],
]

function fill(script: string, l: ReturnType<typeof layout>): string {
  return script.replaceAll('$OUT', l.out).replaceAll('$SIB', l.sibling).replaceAll('$REL', l.out.slice(1)).replaceAll('$ROOT', l.root)
}

async function backgroundAll(rt: ShellRuntime, scripts: string[]): Promise<string[][]> {
  const started = await Promise.all(scripts.map((s, i) => rt.shell_background({ commands: [s], id: `case-${i}` })))
  return Promise.all(
    started.map((b) =>
      eventually(
        async () => {
          const r = await rt.shell_logs({ id: b.id, n: 200 })
          return r.status === 'exited' ? r.lines : undefined
        },
        30_000,
        `${b.id} to exit`,
      ),
    ),
  )
}

describe.each(mechanisms)('confinement by %s', (confine) => {
  const opts = (extra: Partial<ShellRuntimeOptions> = {}): Partial<ShellRuntimeOptions> => ({ confine, ...extra })

  it('refuses every write outside the root through shell_run, and the outside trees hash the same', async () => {
    const l = layout()
    const before = l.hash()
    const { rt } = makeRuntime({ ...opts(), roots: [l.root] })
    expect(rt.confinement.kind).toBe(confine)
    const r = await rt.shell_run({ commands: OUTSIDE.map(([, s]) => fill(s, l)) })
    // Let anything that still runs (a late writer) try, then compare.
    await new Promise((res) => setTimeout(res, 300))
    expect(l.hash()).toBe(before)
    for (const [i, [name]] of OUTSIDE.entries()) {
      const c = r.commands[i]
      expect(
        c?.exit !== 0 || /denied|Read-only|No such file|nonexistent|not permitted|cross-device/.test(c?.stderr ?? ''),
        `${name}: ${JSON.stringify(c)}`,
      ).toBe(true)
    }
    // The direct write is refused with the command's own error and a note naming the policy.
    expect(r.commands[0]?.stderr).toMatch(/Permission denied|Read-only file system|No such file/)
    // The note says what the host can do in words that fit a library host and the CLI alike: no flag.
    if (confine === 'landlock') expect(r.commands[0]?.note).toContain('; the host can allow more writable paths.')
    expect(r.commands[0]?.note ?? '').not.toMatch(/--[a-z]/)
  }, 240_000)

  it('refuses every write outside the root through shell_background, after the call returned too', async () => {
    const l = layout()
    const before = l.hash()
    // Every case at once, each its own background shell.
    const { rt } = makeRuntime({ ...opts({ maxShells: OUTSIDE.length }), roots: [l.root] })
    const logs = await backgroundAll(
      rt,
      OUTSIDE.map(([, s]) => fill(s, l)),
    )
    await new Promise((res) => setTimeout(res, 300))
    expect(l.hash()).toBe(before)
    expect(logs[0]?.join('\n')).toMatch(/Permission denied|Read-only file system|No such file/)
  }, 240_000)

  it('allows every kind of write inside the root and TMPDIR, through shell_run and shell_background', async () => {
    for (const tool of ['shell_run', 'shell_background'] as const) {
      const l = layout()
      const before = l.hash()
      const { rt } = makeRuntime({ ...opts({ maxShells: INSIDE.length }), roots: [l.root] })
      const scripts = INSIDE.map(([, s]) => fill(s, l))
      if (tool === 'shell_run') {
        const r = await rt.shell_run({ commands: scripts })
        for (const [i, c] of r.commands.entries()) expect(c.exit, `${INSIDE[i]?.[0]}: ${c.stderr}`).toBe(0)
      } else {
        await backgroundAll(rt, scripts)
      }
      for (const [name, , file, content] of INSIDE) expect(readFileSync(join(l.root, file), 'utf8'), `${tool}: ${name}`).toBe(content)
      expect(l.hash()).toBe(before)
    }
  }, 240_000)

  it('hides the secret stores of the home directory and honours --deny-read; other files stay readable', async () => {
    const home = tempDir('home')
    for (const [p, text] of [
      ['.ssh/id_ed25519', 'PRIVATE KEY'],
      ['.aws/credentials', 'aws_secret_access_key=x'],
      ['.config/gh/hosts.yml', 'oauth_token: x'],
      ['.docker/config.json', '{"auths":{}}'],
      ['.netrc', 'machine x password y'],
      ['.config/ok.conf', 'not a secret'],
      ['notes.txt', 'not a secret either'],
    ] as const) {
      mkdirSync(join(home, p, '..'), { recursive: true })
      writeFileSync(join(home, p), text)
    }
    const root = tempDir('root')
    const extra = join(tempDir('extra'), 'private.txt')
    writeFileSync(extra, 'deny me')
    // Under bubblewrap the host's /tmp is private, so the test home is made a root there.
    const roots = confine === 'bwrap' ? [root, home] : [root]
    const { rt } = makeRuntime({ ...opts(), roots, hostEnv: { ...process.env, HOME: home }, denyRead: [extra] })
    const secrets = ['.ssh/id_ed25519', '.aws/credentials', '.config/gh/hosts.yml', '.docker/config.json', '.netrc'].map((p) => `cat "$HOME/${p}"`)
    const r = await rt.shell_run({ commands: [...secrets, `cat ${extra}`, 'cat "$HOME/.config/ok.conf" "$HOME/notes.txt"'] })
    for (const c of r.commands.slice(0, -1)) {
      expect(c.exit, c.command).not.toBe(0)
      expect(c.stdout).toBe('')
    }
    if (confine === 'landlock') {
      expect(r.commands[0]?.note).toContain('hidden from commands')
      expect(r.commands[5]?.note).toContain('(secret stores and the paths the host hides cannot be read)')
    }
    for (const c of r.commands) expect(c.note ?? '', c.command).not.toMatch(/--[a-z]/)
    expect(r.commands.at(-1)).toMatchObject({ exit: 0, stdout: 'not a secretnot a secret either' })
  })

  it.skipIf(process.getuid?.() !== 0)(
    'keeps what is hidden hidden under every name the mount table gives it: a second mount of the home, of a hidden folder, of the folder above both',
    async () => {
      const base = tempDir('mounts', existsSync('/var/tmp') ? '/var/tmp' : undefined)
      const [home, denied, homeAgain, deniedAgain, above] = ['home', 'denied', 'home-again', 'denied-again', 'above-again'].map((d) => join(base, d)) as [
        string,
        string,
        string,
        string,
        string,
      ]
      for (const d of [home, denied, homeAgain, deniedAgain, above]) mkdirSync(d)
      writeFileSync(join(home, '.npmrc'), '//registry/:_authToken=secret\n')
      writeFileSync(join(home, 'notes.txt'), 'not a secret\n')
      writeFileSync(join(denied, 'key'), 'deny me\n')
      const mounted: string[] = []
      const bind = (from: string, to: string) => {
        execFileSync('mount', ['--bind', from, to])
        mounted.unshift(to)
      }
      try {
        bind(home, homeAgain)
        bind(denied, deniedAgain)
        bind(base, above)
        const root = tempDir('root')
        const roots = confine === 'bwrap' ? [root, join(base, 'unrelated')] : [root]
        mkdirSync(join(base, 'unrelated'))
        const { rt } = makeRuntime({ ...opts(), roots, hostEnv: { ...process.env, HOME: home }, denyRead: [denied] })
        expect(rt.confinement.summary).toMatch(/other names? the mount table gives them/)
        const hidden = [
          join(homeAgain, '.npmrc'),
          join(above, 'home', '.npmrc'),
          join(home, '.npmrc'),
          join(deniedAgain, 'key'),
          join(denied, 'key'),
          join(above, 'denied', 'key'),
        ]
        const r = await rt.shell_run({
          commands: [...hidden.map((p) => `cat ${p}`), `cat ${join(homeAgain, 'notes.txt')} ${join(above, 'home', 'notes.txt')}`],
        })
        for (const c of r.commands.slice(0, -1)) {
          expect(c.exit, c.command).not.toBe(0)
          expect(c.stdout, c.command).toBe('')
        }
        expect(r.commands.at(-1)).toMatchObject({ exit: 0, stdout: 'not a secret\nnot a secret\n' })
      } finally {
        for (const m of mounted) execFileSync('umount', ['-l', m])
      }
    },
  )

  it('lets commands write under an --allow-write directory and nowhere else outside', async () => {
    const root = tempDir('root')
    const cache = tempDir('cache')
    const other = tempDir('other')
    const { rt } = makeRuntime({ ...opts(), roots: [root], allowWrite: [cache] })
    const r = await rt.shell_run({ commands: [`echo c > ${cache}/c`, `echo o > ${other}/o`] })
    expect(r.commands[0]?.exit).toBe(0)
    expect(readFileSync(join(cache, 'c'), 'utf8')).toBe('c\n')
    expect(r.commands[1]?.exit).not.toBe(0)
    expect(existsSync(join(other, 'o'))).toBe(false)
  })

  it('refuses a TCP connect to a loopback listener with network off, and allows it by default', async () => {
    let connections = 0
    const server = createServer((s) => {
      connections++
      s.end('hello\n')
    })
    await new Promise<void>((res) => server.listen(0, '127.0.0.1', res))
    const { port } = server.address() as AddressInfo
    try {
      const connect = `exec 3<>/dev/tcp/127.0.0.1/${port} && head -n 1 <&3`
      const on = makeRuntime(opts()).rt
      const allowed = await on.shell_run({ commands: [connect] })
      // Under bubblewrap the default keeps the host network: the same loopback.
      expect(allowed.commands[0]).toMatchObject({ exit: 0, stdout: 'hello\n' })
      expect(connections).toBe(1)
      const off = makeRuntime(opts({ network: false })).rt
      const refused = await off.shell_run({ commands: [connect, `python3 -c "import socket; socket.create_connection(('127.0.0.1', ${port}))"`] })
      for (const c of refused.commands) expect(c.exit, c.stderr).not.toBe(0)
      expect(connections).toBe(1)
    } finally {
      server.close()
    }
  })
})

describe('confinement: the kept Landlock ruleset', () => {
  it('is built once per session, and a job never uses it stale: new entries are readable at once, new secret stores hidden at once', async () => {
    if (!mechanisms.includes('landlock')) return
    const home = tempDir('home')
    mkdirSync(join(home, '.ssh'))
    writeFileSync(join(home, '.ssh', 'id_ed25519'), 'PRIVATE KEY')
    const { rt } = makeRuntime({ confine: 'landlock', hostEnv: { ...process.env, HOME: home } })
    await rt.shell_run({ commands: ['true'] })
    await eventually(() => (existsSync(join(rt.spoolDir, 'ruleset')) ? true : undefined), 10_000, 'the keeper to stamp its ruleset')
    const check = async () => {
      const r = await rt.shell_run({ commands: [`cat ${home}/new.txt`, `cat ${home}/.aws/credentials`, `cat ${home}/.ssh/id_ed25519`] })
      expect(r.commands[0]).toMatchObject({ exit: 0, stdout: 'made after the start' })
      for (const c of r.commands.slice(1)) expect(c.stdout, c.command).toBe('')
      for (const c of r.commands.slice(1)) expect(c.exit, c.command).not.toBe(0)
    }
    writeFileSync(join(home, 'new.txt'), 'made after the start')
    mkdirSync(join(home, '.aws'))
    writeFileSync(join(home, '.aws', 'credentials'), 'aws_secret_access_key=x')
    await check()
    // The keeper notices within a second and builds again; jobs then take the new ruleset.
    await new Promise((r) => setTimeout(r, 1500))
    await check()
  })
})

describe('confinement: secret stores made while a command runs', () => {
  it('stay hidden from that command too, whether their folder existed or not', async () => {
    if (!mechanisms.includes('landlock')) return
    const home = tempDir('home')
    mkdirSync(join(home, '.config')) // the folder of ~/.config/gh exists, the store does not yet
    const { rt } = makeRuntime({ confine: 'landlock', hostEnv: { ...process.env, HOME: home } })
    const stores = ['.config/gh/hosts.yml', '.kube/config', '.claude/.credentials.json', '.codex/auth.json']
    const loop = stores.map((s) => `cat "$HOME/${s}" 2>/dev/null`).join('; ')
    const b = await rt.shell_background({ commands: [`echo started; for i in $(seq 100); do ${loop}; sleep 0.05; done; echo done`] })
    await logsUntil(rt, b.id, (l) => l.includes('started'))
    for (const s of stores) {
      mkdirSync(join(home, s, '..'), { recursive: true })
      writeFileSync(join(home, s), `SECRET ${s}`)
    }
    const lines = await logsUntil(rt, b.id, (l) => l.includes('done'), 60_000)
    expect(lines.join('\n')).not.toContain('SECRET')
    const r = await rt.shell_run({ commands: stores.map((s) => `cat "$HOME/${s}"`) })
    for (const c of r.commands) expect(c.stdout, c.command).toBe('')
  })

  it('stay hidden from a job of the helper that was already running, in a folder granted whole before', () => {
    if (!mechanisms.includes('landlock')) return
    const home = tempDir('home')
    mkdirSync(join(home, '.config'))
    mkdirSync(join(home, '.ssh'))
    writeFileSync(join(home, '.ssh', 'id'), 'KEY')
    const store = join(home, '.config', 'gh', 'hosts.yml')
    // The job waits for the store to appear, then reads it.
    const script = `while [ ! -e ${store} ]; do sleep 0.02; done; sleep 0.1; cat ${store}; echo "exit $?"`
    const job = spawn(HELPER, ['--landlock', '--hide', join(home, '.ssh'), '--hide', join(home, '.config', 'gh'), '--', '/bin/bash', '-c', script])
    let out = ''
    job.stdout.on('data', (d: Buffer) => (out += d))
    job.stderr.on('data', (d: Buffer) => (out += d))
    const ended = new Promise((r) => job.once('close', r))
    return (async () => {
      await new Promise((r) => setTimeout(r, 300))
      mkdirSync(join(home, '.config', 'gh'))
      writeFileSync(store, 'SECRET')
      await ended
      expect(out).not.toContain('SECRET')
      expect(out).toContain('Permission denied')
    })()
  })
})

describe('confinement: everyday tools work confined', () => {
  it('git, npm install into the root, a Python venv and gcc with its temporary files', async () => {
    const cache = tempDir('npm-cache')
    const { rt, root } = makeRuntime({ allowWrite: [cache] })
    expect(rt.confinement.kind).not.toBe('off')
    const r = await rt.shell_run({
      commands: [
        'git init -q . && echo a > a && git add a && git -c user.email=t@example.com -c user.name=t commit -q -m first && git log --oneline | wc -l',
        `npm install --cache ${cache} --no-audit --no-fund --loglevel=error is-number@7.0.0 >/dev/null && node -e "console.log(require('is-number')(5))"`,
        'python3 -m venv venv && venv/bin/python -c "import sys; print(sys.prefix)"',
        'printf "int main(void){return 7;}\\n" > m.c && gcc -o m m.c && ./m; echo "exit $?"',
      ],
    })
    expect(r.commands[0]).toMatchObject({ exit: 0, stdout: '1\n' })
    expect(r.commands[1], r.commands[1]?.stderr).toMatchObject({ exit: 0, stdout: 'true\n' })
    expect(r.commands[2]).toMatchObject({ exit: 0, stdout: `${root}/venv\n` })
    expect(r.commands[3]).toMatchObject({ exit: 0, stdout: 'exit 7\n' })
    for (const c of r.commands) expect(c.note, c.command).toBeNull()
  }, 360_000)
})

describe('confinement: choosing a mechanism', () => {
  const withEnv = async (vars: Record<string, string>, fn: () => Promise<void>) => {
    const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]))
    Object.assign(process.env, vars)
    try {
      await fn()
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k]
        else process.env[k] = v
      }
    }
  }

  it('auto uses Landlock here and says so', () => {
    const { rt } = makeRuntime()
    expect(rt.confinement.kind).toBe(mechanisms[0] ?? 'off')
    expect(rt.confinement.summary).toMatch(/^commands are confined by|^commands run UNCONFINED/)
    // How process trees are held is said too, as the keeper holds them.
    expect(rt.confinement.summary).toMatch(
      rt.treeKind === 'cgroup' ? /^process trees: each job runs in a cgroup of its own/m : /^process trees: found by an environment marker/m,
    )
    const marked = makeRuntime({ tree: 'marker' }).rt
    expect(marked.confinement.summary).toMatch(/^process trees: found by an environment marker and the helper that reaps them \(no cgroup holds them\)/m)
  })

  it('without Landlock, auto falls back to bubblewrap; without both, it refuses to run commands and says what is missing and the fix', async () => {
    await withEnv({ HANDS_CONFINE_UNAVAILABLE: 'landlock' }, async () => {
      if (mechanisms.includes('bwrap')) {
        const { rt } = makeRuntime()
        expect(rt.confinement.kind).toBe('bwrap')
        expect(rt.confinement.summary).toContain('Landlock is marked unavailable')
      }
      expect(() => makeRuntime({ confine: 'landlock' })).toThrow(/"landlock" was asked for/)
    })
    await withEnv({ HANDS_CONFINE_UNAVAILABLE: 'landlock,bwrap' }, async () => {
      // Nothing starts: no runtime, no spool, no command.
      const before = readdirSync(tmpdir()).filter((n) => n.startsWith('hands-shell-')).length
      let thrown: unknown
      try {
        makeRuntime()
      } catch (e) {
        thrown = e
      }
      expect(thrown).toBeInstanceOf(ToolError)
      const e = thrown as ToolError
      expect(e.code).toBe('sandbox_unavailable')
      expect(e.is_preflight).toBe(true)
      expect(e.message).toMatch(
        /^Commands cannot run on this host: no sandbox can confine them \(Landlock is marked unavailable .*bubblewrap is marked unavailable/,
      )
      expect(e.hint).toContain('switch confinement off on purpose')
      expect(readdirSync(tmpdir()).filter((n) => n.startsWith('hands-shell-')).length).toBeLessThanOrEqual(before)
      const described = describeConfinement({ roots: [tmpdir()] })
      expect(described.kind).toBe('unavailable')
      expect(described.summary).toMatch(/^commands cannot run: no sandbox can confine them here/)
      // Off on purpose runs them, and says so in every result.
      const { rt, root } = makeRuntime({ confine: 'off' })
      const r = await rt.shell_run({ commands: ['echo hi', 'exit 3'] })
      for (const c of r.commands) expect(c.note).toMatch(/^Ran unconfined \(the host switched confinement off\): it could write outside the roots/)
      const w = await rt.shell_run({ commands: [`echo x > ${root}-unconfined-probe && rm ${root}-unconfined-probe`] })
      expect(w.commands[0]?.exit).toBe(0)
    })
    await withEnv({ HANDS_CONFINE_UNAVAILABLE: 'helper' }, async () => {
      expect(() => makeRuntime()).toThrow(/the helper is marked unavailable/)
      const { rt } = makeRuntime({ confine: 'off' })
      expect(rt.confinement.summary).toContain('is not reported (the confinement helper is not built)')
    })
  })

  it('holds every setting the host gave, or refuses to start: the network cut with confinement off, a hidden path inside a root', async () => {
    const { rt } = makeRuntime({ confine: 'off', network: false })
    expect(rt.confinement.summary).toContain('network: cut by a seccomp filter: no socket but UNIX and netlink can be made')
    const listener = createServer((s) => s.destroy())
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r))
    const port = (listener.address() as AddressInfo).port
    const py = (code: string) => `python3 -c ${JSON.stringify(code)}`
    const r = await rt.shell_run({
      commands: [
        py(`import socket; socket.create_connection(("127.0.0.1", ${port}), 5)`),
        py('import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)'),
        py('import socket; socket.socket(socket.AF_INET6, socket.SOCK_STREAM)'),
        py('import socket; socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)'),
        py('import socket; a, b = socket.socketpair(); a.send(b"x"); print(b.recv(1).decode())'),
      ],
    })
    listener.close()
    for (const c of r.commands.slice(0, 4)) {
      expect(c.exit, c.command).not.toBe(0)
      expect(c.stderr, c.command).toContain('Permission denied')
    }
    expect(r.commands[4]?.stdout).toBe('x\n')
    await withEnv({ HANDS_CONFINE_UNAVAILABLE: 'seccomp' }, async () => {
      expect(() => makeRuntime({ confine: 'off', network: false })).toThrow(
        /cutting the network \(network: false, --no-network\) cannot be held here: confinement is off, and no seccomp filter/,
      )
      if (mechanisms.includes('landlock'))
        expect(() => makeRuntime({ confine: 'landlock', network: false })).toThrow(
          /cannot be held here: Landlock cannot cut the network without a seccomp filter/,
        )
    })
    expect(() => makeRuntime({ confine: 'off', denyRead: ['/etc/hostname'] })).toThrow(
      /hiding a path \(denyRead, --deny-read\) cannot be held here: confinement is off/,
    )
    if (mechanisms.includes('landlock')) {
      const root = tempDir('deny-inside')
      mkdirSync(join(root, 'secret'))
      writeFileSync(join(root, 'secret', 'key'), 'k\n')
      expect(() => makeRuntime({ roots: [root], confine: 'landlock', denyRead: [join(root, 'secret')] })).toThrow(
        /Landlock cannot hide .*secret: a writable path contains it/,
      )
      if (mechanisms.includes('bwrap')) {
        // auto takes bubblewrap, which can hide it, and it is hidden.
        const { rt: auto } = makeRuntime({ roots: [root], denyRead: [join(root, 'secret')] })
        expect(auto.confinement.kind).toBe('bwrap')
        const read = await auto.shell_run({ commands: ['cat secret/key'] })
        expect(read.commands[0]?.stdout).toBe('')
      }
    }
  })

  it('an older Landlock ABI is used for what it can do, and the gaps are named', async () => {
    if (!mechanisms.includes('landlock')) return
    await withEnv({ HANDS_LANDLOCK_ABI: '3' }, async () => {
      const l = layout()
      const before = l.hash()
      const { rt } = makeRuntime({ roots: [l.root], confine: 'landlock' })
      expect(rt.confinement.summary).toContain('ABI 3')
      // The seccomp supervisor keeps signals in the tree where Landlock cannot scope them.
      expect(rt.confinement.summary).not.toContain('can signal processes outside its tree')
      const r = await rt.shell_run({ commands: [fill('echo x > $OUT/f1; truncate -s 0 $OUT/f1; rm $OUT/f1', l)] })
      expect(r.commands[0]?.exit).not.toBe(0)
      expect(l.hash()).toBe(before)
    })
  })

  it('gives each session its own TMPDIR, which commands may write and close() removes', async () => {
    const a = makeRuntime().rt
    const b = makeRuntime().rt
    expect(a.tmpDir).not.toBe(b.tmpDir)
    const r = await a.shell_run({ commands: ['echo "$TMPDIR"; echo t > "$TMPDIR/kept"'] })
    expect(r.commands[0]).toMatchObject({ stdout: `${a.tmpDir}\n`, exit: 0 })
    expect(readFileSync(join(a.tmpDir, 'kept'), 'utf8')).toBe('t\n')
    const other = await b.shell_run({ commands: [`echo x > ${a.tmpDir}/from-b`] })
    if (b.confinement.kind !== 'off') expect(other.commands[0]?.exit).not.toBe(0)
    await a.close()
    expect(existsSync(a.tmpDir)).toBe(false)
  })

  it('off runs commands unconfined with the note, without probing anything', async () => {
    const { rt } = makeRuntime({ confine: 'off' })
    const r = await rt.shell_run({ commands: ['true'] })
    expect(r.commands[0]?.note).toContain('the host switched confinement off')
  })

  it('the write-refusal note does not fire on unrelated failures', async () => {
    if (!mechanisms.includes('landlock')) return
    const { rt, root } = makeRuntime()
    const r = await rt.shell_run({
      commands: [
        'echo "ssh: Permission denied (publickey)." >&2; exit 255',
        `mkdir ${root}/ro && chmod 500 ${root}/ro && echo x > ${root}/ro/f`,
        'cat /nonexistent/file',
        `echo "cp: cannot create regular file '${root}/x': Permission denied" >&2; exit 1`,
      ],
    })
    for (const c of r.commands) expect(c.note ?? '', c.command).not.toMatch(/writable paths|hidden from commands/)
  })
})
