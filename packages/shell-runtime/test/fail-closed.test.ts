/**
 * Fail closed, as inside a container whose seccomp profile refuses Landlock (ENOSYS: podman's
 * answer for a call its profile does not list; EPERM: engines whose profiles predate Landlock), or
 * seccomp too: no command runs unconfined unless the host chose `off`, no setting is dropped, and
 * what the runtime says agrees with what its results say. Each case is a host process (the built
 * package on plain node) started under test/fixtures/with-profile.c.
 */
import { spawnSync } from 'node:child_process'
import { lstatSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { MECHANISMS, tempDir } from './helpers.ts'
import { withProfile, type ProfileOptions } from './profile.ts'

const DIST = join(import.meta.dirname, '..', 'dist', 'index.js')

interface Outcome {
  thrown: { code?: string; message: string; hint?: string } | null
  kind?: string
  summary?: string
  result?: {
    commands: Array<{
      command: string
      exit: number | null
      stdout: string
      stderr: string
      note: string | null
      changes: { is_complete: boolean; note: string | null }
    }>
  }
}

/** Under `profile` (and HANDS_CONFINE_UNAVAILABLE=`unavailable`), make a runtime with `options` and run `commands`; what happened. */
function host(profile: ProfileOptions, options: Record<string, unknown>, commands: string[], unavailable = ''): Outcome {
  const root = tempDir('fail-closed')
  const script = `
const m = await import(${JSON.stringify(DIST)})
let rt
try {
  rt = m.createShellRuntime({ roots: [${JSON.stringify(root)}], stopGraceMs: 300, ...${JSON.stringify(options)} })
} catch (e) {
  console.log(JSON.stringify({ thrown: { code: e.code, message: e.message, hint: e.hint } }))
  process.exit(0)
}
const result = await rt.shell_run({ commands: ${JSON.stringify(commands)} })
await rt.close()
console.log(JSON.stringify({ thrown: null, kind: rt.confinement.kind, summary: rt.confinement.summary, result }))`
  const [file, ...args] = withProfile(profile)
  args.push(process.execPath, '--input-type=module', '-e', script)
  const env: Record<string, string | undefined> = { ...process.env, HANDS_CONFINE_UNAVAILABLE: unavailable }
  const r = spawnSync(file as string, args, { encoding: 'utf8', timeout: 120_000, env })
  expect(r.status, r.stderr).toBe(0)
  return JSON.parse(r.stdout) as Outcome
}

/** A write the user may make and a confined command may not, and a read of the server's environment. */
const ESCAPES = (root: string) => [
  `touch ${root}/../escaped-${process.pid} && echo wrote-outside`,
  `head -c 10 /proc/${process.pid}/environ && echo read-environ`,
]

describe('fail closed under a container seccomp profile', () => {
  for (const errno of ['ENOSYS', 'EPERM'] as const) {
    it(`with the Landlock calls answering ${errno} and no bubblewrap, every shell tool refuses, naming the profile and the fix; --no-network is not dropped`, () => {
      const root = tempDir('fail-closed-root')
      for (const options of [{}, { network: false }]) {
        const o = host({ landlock: errno }, options, ESCAPES(root), 'bwrap')
        expect(o.thrown?.code).toBe('sandbox_unavailable')
        expect(o.thrown?.message).toMatch(
          /^Commands cannot run on this host: no sandbox can confine them \(Landlock is refused by a seccomp profile on this process \(a container's\?/,
        )
        expect(o.thrown?.message).toContain(`its calls answer ${errno}`)
        expect(o.thrown?.hint).toContain(
          "allow landlock_create_ruleset, landlock_add_rule and landlock_restrict_self in the container engine's seccomp profile",
        )
        expect(o.thrown?.hint).toContain('switch confinement off on purpose')
      }
    })
  }

  it.skipIf(!MECHANISMS.includes('bwrap'))(
    'with the Landlock calls refused and bubblewrap at hand, commands are confined by bubblewrap, and the summary says why',
    () => {
      const root = tempDir('fail-closed-bwrap')
      const o = host({ landlock: 'ENOSYS' }, { network: false }, [
        ...ESCAPES(root),
        'python3 -c "import socket; socket.create_connection((\'127.0.0.1\', 9), 2)"',
      ])
      expect(o.thrown).toBeNull()
      expect(o.kind).toBe('bwrap')
      expect(o.summary).toMatch(/^commands are confined by bubblewrap \(Landlock is unavailable: Landlock is refused by a seccomp profile/)
      for (const c of o.result?.commands ?? []) {
        expect(c.stdout, c.command).not.toMatch(/wrote-outside|read-environ/)
        expect(c.exit, c.command).not.toBe(0)
      }
    },
  )

  it('with seccomp refused too and confinement off on purpose, the network cut cannot be held: the runtime refuses to start', () => {
    const o = host({ landlock: 'ENOSYS', seccomp: 'EPERM' }, { confine: 'off', network: false }, ['true'])
    expect(o.thrown?.message).toMatch(
      /^confine: cutting the network \(network: false, --no-network\) cannot be held here: confinement is off, and no seccomp filter can refuse sockets \(seccomp filters are refused by a seccomp profile on this process/,
    )
  })

  it.skipIf(!MECHANISMS.includes('landlock'))(
    'with seccomp refused (Landlock allowed), the summary and every result agree that changes are not observed, and the gaps are named',
    () => {
      const o = host({ seccomp: 'EPERM' }, {}, ['touch made'])
      expect(o.kind).toBe('landlock')
      expect(o.summary).toMatch(/^gap: what commands change on disk is not reported \(the kernel gives no seccomp supervisor here/m)
      expect(o.summary).toMatch(/^gap: a command can connect to any UNIX socket it can name/m)
      expect(o.summary).not.toMatch(/^changes on disk: each command's/m)
      const c = o.result?.commands[0]
      expect(c?.exit).toBe(0)
      expect(c?.changes.is_complete).toBe(false)
      expect(c?.changes.note).toMatch(/^Not observed: the kernel gives no seccomp supervisor here/)
    },
  )

  it.skipIf(!MECHANISMS.includes('landlock'))(
    "with pidfd_getfd and process_vm_readv refused (docker's profile without CAP_SYS_PTRACE), sockets and metadata are still guarded, changes still named, and the race is declared",
    async () => {
      const out = tempDir('fail-closed-out')
      writeFileSync(join(out, 'f'), 'outside\n')
      let hostConnections = 0
      const server = createServer((c) => {
        hostConnections++
        c.on('error', () => undefined)
        c.end()
      })
      await new Promise<void>((r) => server.listen(join(out, 'host.sock'), r))
      try {
        const py = (code: string) => `python3 -c ${JSON.stringify(code)}`
        const o = host({ ptraceCalls: 'EPERM' }, {}, [
          py(
            'import socket, threading; s = socket.socket(socket.AF_UNIX); s.bind("own.sock"); s.listen(1); threading.Thread(target=lambda: s.accept()[0].send(b"ok"), daemon=True).start(); c = socket.socket(socket.AF_UNIX); c.connect("own.sock"); print(c.recv(2).decode())',
          ),
          py(`import socket; socket.socket(socket.AF_UNIX).connect(${JSON.stringify(join(out, 'host.sock'))})`),
          `chmod 600 ${join(out, 'f')}`,
          py(`import os; fd = os.open(${JSON.stringify(join(out, 'f'))}, os.O_RDONLY); os.fchmod(fd, 0o600)`),
          'touch made && chmod 600 made && touch -d 2001-01-01 made',
        ])
        expect(o.kind).toBe('landlock')
        expect(o.summary).toMatch(
          /^gap: a command that races its own threads against the check of a connect can reach a socket the check refused: .*pidfd_getfd is refused here \(EPERM: a seccomp profile/m,
        )
        const [own, hostSocket, chmodOut, fchmodOut, inside] = o.result?.commands ?? []
        expect(own?.stdout, own?.stderr).toBe('ok\n')
        expect(hostSocket?.stderr).toContain('Permission denied')
        expect(hostSocket?.note).toContain(`The sandbox refused a connection to the socket \`${join(out, 'host.sock')}\``)
        for (const c of [chmodOut, fchmodOut]) expect(c?.stderr, c?.command).toContain('Permission denied')
        expect(inside?.exit, inside?.stderr).toBe(0)
        expect(inside?.changes.is_complete).toBe(true)
        expect(hostConnections).toBe(0)
        expect(lstatSync(join(out, 'f')).mode & 0o777).toBe(0o644)
      } finally {
        server.close()
      }
    },
  )

  it('with seccomp refused and confinement off on purpose (as root), the summary and every result agree that changes are not observed', () => {
    const o = host({ seccomp: 'EPERM' }, { confine: 'off' }, ['touch made'])
    expect(o.kind).toBe('off')
    expect(o.summary).toMatch(/^gap: what commands change on disk is not reported/m)
    expect(o.result?.commands[0]?.changes.is_complete).toBe(false)
    expect(o.result?.commands[0]?.note).toMatch(/Ran unconfined \(the host switched confinement off\)/)
  })
})
