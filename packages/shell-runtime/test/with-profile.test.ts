import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { withProfile, withProfileBinary } from './profile.ts'

/** The helper `pnpm build` (or `node native/build.mjs`) makes; its `--probe` says what the kernel lets this process have. */
const HELPER = join(import.meta.dirname, '..', '..', 'sandbox', 'native', 'bin', `linux-${process.arch}`, 'hands-confine')

function run(argv: string[], input = ''): { status: number | null; stdout: string; stderr: string } {
  const [file, ...args] = argv
  const r = spawnSync(file!, args, { encoding: 'utf8', input, timeout: 120_000 })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** The probe's first two lines, `landlock …` and `seccomp …` (the facts after them are the host's). */
function probe(prefix: string[]): [string, string] {
  const r = run([...prefix, HELPER, '--probe'])
  expect(r.stderr).toBe('')
  expect(r.status).toBe(0)
  const [landlock = '', seccomp = ''] = r.stdout.trimEnd().split('\n')
  return [landlock, seccomp]
}

describe.runIf(process.platform === 'linux')('with-profile: a container seccomp profile without a container engine', () => {
  let machine: [string, string]
  beforeAll(() => {
    withProfileBinary()
    machine = probe([])
  })

  it('without options the probe under it prints what the machine offers', () => {
    expect(probe(withProfile())).toEqual(machine)
  })

  it('--landlock ENOSYS makes the probe find no Landlock, as a profile that does not list the Landlock calls does', () => {
    expect(probe(withProfile({ landlock: 'ENOSYS' }))).toEqual(['landlock 0 errno 38 Function not implemented', machine[1]])
  })

  it('--landlock EPERM makes the probe see Landlock refused', () => {
    expect(probe(withProfile({ landlock: 'EPERM' }))).toEqual(['landlock 0 errno 1 Operation not permitted', machine[1]])
  })

  it("--seccomp EPERM leaves the program no seccomp filter of its own, while the fixture's stays", () => {
    expect(probe(withProfile({ seccomp: 'EPERM' }))).toEqual([machine[0], 'seccomp none errno 1 Operation not permitted'])
    const status = run([...withProfile({ seccomp: 'EPERM' }), 'cat', '/proc/self/status']).stdout
    expect(status).toMatch(/^NoNewPrivs:\s+1$/m)
    expect(status).toMatch(/^Seccomp:\s+2$/m)
    expect(status).toMatch(/^Seccomp_filters:\s+1$/m)
  })

  it('--user-notif EBUSY refuses only a supervisor, as when another supervisor holds the process', () => {
    expect(probe(withProfile({ userNotif: 'EBUSY' }))).toEqual([machine[0], 'seccomp refusing errno 16 Device or resource busy'])
  })

  it('--landlock and --seccomp together take both away', () => {
    expect(probe(withProfile({ landlock: 'EPERM', seccomp: 'EPERM' }))).toEqual([
      'landlock 0 errno 1 Operation not permitted',
      'seccomp none errno 1 Operation not permitted',
    ])
  })

  it('wraps any command: arguments, stdin, stdout and the exit code pass through, in its children too', () => {
    const r = run([...withProfile({ landlock: 'ENOSYS' }), 'bash', '-c', 'read -r line; echo "$line $1"; bash -c "exit 7"; exit $?', 'bash', 'arg'], 'in\n')
    expect(r).toEqual({ status: 7, stdout: 'in arg\n', stderr: '' })
    const nested = run([
      ...withProfile({ landlock: 'ENOSYS' }),
      process.execPath,
      '-e',
      'process.stdout.write(require("node:fs").readFileSync("/proc/self/status", "utf8"))',
    ])
    expect(nested.stdout).toMatch(/^Seccomp_filters:\s+1$/m)
  })

  it('exits 127 for a program it cannot find and 125 for an option it does not know', () => {
    expect(run([...withProfile(), 'hands-no-such-program']).status).toBe(127)
    expect(run([withProfileBinary(), '--landlock', 'ENOENT', '--', 'true']).status).toBe(125)
  })
})
