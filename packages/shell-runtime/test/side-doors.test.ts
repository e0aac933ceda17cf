/**
 * Nothing outside a job's own tree is within its reach by any route beside the paths: the
 * server's and the reaper's limits and priority, other terminals, capabilities that act outside
 * the roots, the network past --no-network, the host's descriptors, the OOM killer's choice, the
 * host's /proc/sys. Each attempt runs in a real host (fixtures/side-doors.ts), confined by every
 * mechanism that works here, as root and as an unprivileged user.
 */
import { spawn } from 'node:child_process'
import { chmodSync, chownSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { hostArgv, makeRuntime, MECHANISMS, tempDir } from './helpers.ts'

const isRoot = process.getuid?.() === 0
/** The unprivileged user the attempts run as too (Debian's nobody), when this test runs as root. */
const NOBODY = 65534
const users = isRoot ? (['root', 'unprivileged'] as const) : (['unprivileged'] as const)

/** What a root job keeps: chown, dac_override, fowner, fsetid, kill, setgid, setuid, setpcap, net_bind_service, sys_chroot, audit_write. */
const KEPT_CAPS = '00000000200405fb'

interface Report {
  uid: number
  kind: string
  harnessFd: string
  before: { server: Record<string, string>; reaper: Record<string, string> | null; spawner: Record<string, string> | null }
  after: { server: Record<string, string>; reaper: Record<string, string> | null; spawner: Record<string, string> | null }
  results: Record<string, { exit: number | null; stdout: string; stderr: string }>
  logsA: string[]
  logsB: string[]
  ttyA: string
  accepted: number
  datagrams: number
  abstractConnections: number
  hostSocketConnections: number
  rssGrowthMiB: number
  escaped: number[]
}

function host(mode: string, user: (typeof users)[number]): Promise<Report> {
  const root = tempDir('side-doors')
  const outside = join(tempDir('outside'), 'precious')
  writeFileSync(outside, 'outside the roots\n')
  const prefix = user === 'unprivileged' && isRoot ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--'] : []
  if (prefix.length > 0) {
    chownSync(root, NOBODY, NOBODY)
    chmodSync(root, 0o755)
  }
  const argv = hostArgv('side-doors', [mode, root, outside, 'off'])
  const [file, ...args] = [...prefix, ...argv] as [string, ...string[]]
  // fd 3: a pipe the host holds without close-on-exec, as a harness's would be.
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe', 'pipe'], env: { ...process.env, HOME: root } })
  let out = ''
  let err = ''
  child.stdout?.on('data', (d: Buffer) => (out += d))
  child.stderr?.on('data', (d: Buffer) => (err += d))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000)
    child.once('close', (code) => {
      clearTimeout(timer)
      if (code !== 0) reject(new Error(`the host exited ${code}: ${err}`))
      else resolve(JSON.parse(out) as Report)
    })
  })
}

const failed = (r: Report, name: string) => {
  const got = r.results[name]
  expect(got, name).toBeDefined()
  expect(got?.exit, `${name}: ${JSON.stringify(got)}`).not.toBe(0)
}

describe('side doors out of a job', () => {
  for (const user of users) {
    for (const mode of MECHANISMS) {
      it(`(${mode}, ${user}) reaches nothing outside its tree: limits, priority, terminals, capabilities, network, descriptors, OOM score, /proc/sys`, async () => {
        const r = await host(mode, user)
        expect(r.kind).toBe(mode)
        expect(r.uid).toBe(user === 'root' ? 0 : isRoot ? NOBODY : process.getuid?.())

        // Item 3: the server, the reaper and the spawner are as they were; the job's own child was its to change.
        expect(r.after.server).toEqual(r.before.server)
        expect(r.after.reaper).toEqual(r.before.reaper)
        for (const name of [
          'prlimit server nofile',
          'prlimit server cpu',
          'prlimit server fsize',
          'renice server',
          'taskset server',
          'ionice server',
          'chrt server',
          'pidfd of the server',
        ])
          failed(r, name)
        // Every process of the user: refused under Landlock; under bubblewrap it reaches the sandbox's own only.
        if (mode === 'landlock') failed(r, 'renice user')
        if (r.before.reaper !== null) failed(r, 'prlimit reaper')
        // The spawner that forks every job is out of reach too: it was there, and stands as it was.
        expect(r.before.spawner).not.toBeNull()
        expect(r.after.spawner).toEqual(r.before.spawner)
        for (const name of ['prlimit spawner', 'stop the spawner', 'write the spawner a request']) failed(r, name)
        expect(r.results['own child']?.stdout).toContain('own-ok')

        // Item 2: a job opens its own terminal only.
        failed(r, 'write another terminal')
        expect(r.logsA).toContain('to-own-terminal')
        expect(r.logsA.join('\n')).not.toMatch(/from-a-command|from-shell-b/)

        // Item 4: as root, only the capabilities work inside the roots needs.
        if (user === 'root') {
          const caps = r.results['caps']?.stdout ?? ''
          expect(caps).toMatch(new RegExp(`CapPrm:\\s*${KEPT_CAPS}`))
          expect(caps).toMatch(new RegExp(`CapEff:\\s*${KEPT_CAPS}`))
          expect(caps).toMatch(/CapAmb:\s*0{16}|CapAmb:\s*00000000200405fb/)
          expect(caps).toMatch(new RegExp(`CapBnd:\\s*${KEPT_CAPS}`))
          failed(r, 'set the clock')
          failed(r, 'immutable outside')
        }
        failed(r, 'raw socket')

        // Item 5: --no-network cuts every protocol, MPTCP included (bubblewrap's own loopback takes a datagram that goes nowhere).
        for (const name of ['tcp connect', 'mptcp connect', 'tcp fast open']) failed(r, name)
        if (mode === 'landlock') for (const name of ['udp send', 'listen without bind']) failed(r, name)
        // vsock, which no network namespace holds, is refused by the filter in either mechanism (not merely unsupported here).
        failed(r, 'vsock')
        expect(r.results['vsock']?.stderr).toContain('Permission denied')
        expect(r.accepted).toBe(0)
        expect(r.datagrams).toBe(0)

        // Beside the network: the host's abstract sockets (Landlock ABI ≥ 6 scopes them, in either
        // mechanism), the kernel keyrings, io_uring, and a child started in another cgroup.
        failed(r, 'abstract socket')
        expect(r.abstractConnections).toBe(0)
        // A pathname socket of the host's outside the roots: the relay's guard refuses the connect.
        failed(r, 'host socket')
        expect(r.results['host socket']?.stderr).toContain('Permission denied')
        expect(r.hostSocketConnections).toBe(0)
        failed(r, 'keyring')
        expect(r.results['io_uring']?.stdout).toMatch(/io_uring -1 38/)
        if (user === 'root') expect(r.results['clone3 into another cgroup']?.stdout).toMatch(/clone3 -1 38/)
        expect(r.escaped).toEqual([])

        // hands' own pipestatus pipe keeps what a pipeline's statuses need, not what a job floods it with.
        expect(r.results['flood the pipestatus pipe']?.exit).toBe(0)
        expect(r.rssGrowthMiB).toBeLessThan(100)

        // Item 6: a job holds its standard streams (and a background shell its terminal), nothing of the host's.
        // `ls -l` lines `… FD -> TARGET`, but for the directory ls itself reads.
        const open = (lines: string[]) =>
          lines
            .filter((l) => l.includes(' -> ') && !/ -> \/proc\/\d+\/fd$/.test(l))
            .map((l) => {
              const [fd, target] = (l.split(' ').slice(-3) as [string, string, string]).filter((_, i) => i !== 1)
              return { fd, target }
            })
        const fds = open((r.results['descriptors']?.stdout ?? '').split('\n'))
        expect(fds.map((f) => f.fd)).toEqual(['0', '1', '2'])
        const shellFds = open(r.logsB)
        expect(shellFds.map((f) => f.fd)).toEqual(['0', '1', '2'])
        for (const f of [...fds, ...shellFds]) {
          expect(f.target).not.toBe(r.harnessFd)
          expect(f.target).not.toContain('ptmx')
        }

        // Item 7: under memory pressure a job dies first, and cannot change that.
        expect(r.results['oom score']?.stdout.trim()).toBe('500')
        failed(r, 'lower the oom score')

        // Item 8: the host's /proc/sys stays the host's.
        failed(r, 'write /proc/sys')
      }, 360_000)
    }
  }
})

/** A runtime made while the environment says `vars` (the probe reads them when the runtime is made). */
function runtimeWith(vars: Record<string, string>) {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]))
  Object.assign(process.env, vars)
  try {
    return makeRuntime({ confine: 'landlock' })
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
}

describe.skipIf(!MECHANISMS.includes('landlock'))('where the kernel lacks a part', () => {
  it("below Landlock ABI 6, the supervisor keeps signals inside the tree: the server is out of reach, the job's own processes are not", async () => {
    const { rt } = runtimeWith({ HANDS_LANDLOCK_ABI: '5' })
    expect(rt.confinement.summary).not.toMatch(/gap: a command can signal/)
    // SIGCONT: harmless to a running process, so a failure of the guard cannot stop the test.
    const r = await rt.shell_run({
      commands: [
        `kill -CONT ${process.pid}`,
        'kill -CONT -1',
        `python3 -c "import os, signal; os.kill(${process.pid}, signal.SIGCONT)"`,
        'sleep 30 & kill $!; wait $!; echo "own child: $?"',
        'timeout 0.3 sleep 10; echo "timeout: $?"',
      ],
    })
    for (const c of r.commands.slice(0, 3)) expect(c.exit, `${c.command}: ${c.stderr}`).not.toBe(0)
    expect(r.commands[3]?.stdout).toBe('own child: 143\n')
    expect(r.commands[4]?.stdout).toBe('timeout: 124\n')
  })

  it("without a seccomp supervisor, calls naming another process are refused, and the summary says the job's own are too", async () => {
    const { rt } = runtimeWith({ HANDS_CONFINE_UNAVAILABLE: 'supervisor' })
    expect(rt.confinement.summary).toMatch(/gap: a command cannot change the limits or priority of its own processes by pid either/)
    const r = await rt.shell_run({
      commands: [
        `prlimit --pid ${process.pid} --nofile=900:900`,
        'sleep 30 & prlimit --pid $! --nofile=100:100; echo "own: $?"; kill $!',
        'ulimit -n 100 && echo self-ok',
      ],
    })
    expect(r.commands[0]?.exit).not.toBe(0)
    expect(r.commands[1]?.stdout).toBe('own: 1\n')
    expect(r.commands[2]?.stdout).toBe('self-ok\n')
  })

  it('without seccomp, the summary names what a command can then reach', () => {
    const { rt } = runtimeWith({ HANDS_CONFINE_UNAVAILABLE: 'seccomp' })
    expect(rt.confinement.summary).toMatch(/gap: a command can change the limits, priority and CPUs of the user's other processes, the server included/)
    expect(rt.confinement.summary).not.toMatch(/re-limit/)
  })
})
