/**
 * What the helper's probe says about a host, read into reasons a person can act on: a container's
 * seccomp profile refusing Landlock or seccomp is told from a kernel without them (the lines are
 * what `hands-confine --probe` prints; fail-closed.test.ts runs the real helper under such profiles).
 */
import { describe, expect, it } from 'vitest'
import { parseProbe } from '../src/confine/probe.ts'

const probe = (lines: string[]) => parseProbe(`${lines.join('\n')}\n`, null)

describe('the probe of a host', () => {
  it('reads a host where everything works', () => {
    const p = probe(['landlock 7', 'seccomp supervised', 'filtered 0', 'kernel 6.18.44'])
    expect(p).toMatchObject({ abi: 7, error: null, fix: null, seccomp: 'supervised', seccompError: null, host: { filtered: 0, kernel: '6.18.44', lsm: null } })
  })

  it('blames a seccomp profile, not the kernel, when Landlock answers ENOSYS under a filter on a kernel that has it', () => {
    const p = probe([
      'landlock 0 errno 38 Function not implemented',
      'seccomp supervised',
      'filtered 2',
      'kernel 6.18.44',
      'lsm lockdown,capability,landlock,yama',
    ])
    expect(p.abi).toBe(0)
    expect(p.error).toMatch(
      /^Landlock is refused by a seccomp profile on this process \(a container's\? its calls answer ENOSYS.*\); this kernel \(Linux 6\.18\.44\) has it$/,
    )
    expect(p.fix).toMatch(/^allow landlock_create_ruleset, landlock_add_rule and landlock_restrict_self in the container engine's seccomp profile/)
    // Without securityfs to read, the profile is still the likely cause, with the kernel named as the other.
    expect(probe(['landlock 0 errno 38', 'seccomp supervised', 'filtered 2', 'kernel 6.1.0']).error).toMatch(
      /refused by a seccomp profile .*, unless this kernel \(Linux 6\.1\.0\) was built without it$/,
    )
  })

  it('blames a seccomp profile when Landlock answers EPERM under a filter (engines whose profiles predate it)', () => {
    const p = probe(['landlock 0 errno 1 Operation not permitted', 'seccomp supervised', 'filtered 2', 'kernel 6.18.44'])
    expect(p.error).toMatch(/refused by a seccomp profile .*EPERM, as in engines whose profiles predate Landlock/)
    expect(p.fix).toContain('seccomp profile')
  })

  it('blames the kernel when no filter is on the process', () => {
    expect(probe(['landlock 0 errno 38', 'seccomp supervised', 'filtered 0', 'kernel 5.10.0']).error).toBe(
      'Landlock is not in this kernel (Linux 5.10.0): it came in Linux 5.13',
    )
    expect(probe(['landlock 0 errno 38', 'seccomp supervised', 'filtered 0', 'kernel 6.1.0']).error).toBe(
      'Landlock is not in this kernel (Linux 6.1.0): it was built without CONFIG_SECURITY_LANDLOCK',
    )
    const off = probe(['landlock 0 errno 95', 'seccomp supervised', 'filtered 0', 'kernel 6.1.0'])
    expect(off.error).toBe('Landlock is built into this kernel (Linux 6.1.0) but not enabled at boot')
    expect(off.fix).toContain('lsm=')
    // A kernel that lists its security modules without Landlock is not blamed on a profile.
    expect(probe(['landlock 0 errno 38', 'seccomp supervised', 'filtered 2', 'kernel 6.1.0', 'lsm capability,yama']).error).toContain(
      'built without CONFIG_SECURITY_LANDLOCK',
    )
  })

  it('says when restricting a process fails though the kernel has Landlock', () => {
    const p = probe(['landlock 0 restrict errno 1 Operation not permitted', 'seccomp supervised', 'filtered 2', 'kernel 6.18.44'])
    expect(p.error).toMatch(
      /^Landlock is in the kernel, but restricting a process failed \(EPERM\): a seccomp profile .* likely refuses landlock_restrict_self$/,
    )
  })

  it('tells a profile refusing seccomp from a kernel without it, and a supervisor already there', () => {
    const refused = probe(['landlock 7', 'seccomp none errno 1 Operation not permitted', 'filtered 2', 'kernel 6.18.44'])
    expect(refused.seccomp).toBe('none')
    expect(refused.seccompError).toMatch(/^seccomp filters are refused by a seccomp profile on this process \(a container's\? seccomp answers EPERM\)$/)
    expect(refused.seccompFix).toContain('seccomp profile')
    expect(probe(['landlock 7', 'seccomp none errno 22', 'filtered 0', 'kernel 6.18.44']).seccompError).toBe(
      'this kernel (Linux 6.18.44) gives no seccomp filter (EINVAL)',
    )
    const busy = probe(['landlock 7', 'seccomp refusing errno 16 Device or resource busy', 'filtered 2', 'kernel 6.18.44'])
    expect(busy).toMatchObject({ seccomp: 'refusing', seccompError: 'another seccomp supervisor holds this process' })
  })

  it("says when the relay cannot copy a job's descriptors (docker's profile without CAP_SYS_PTRACE), and the fix", () => {
    expect(probe(['landlock 7', 'seccomp supervised', 'takefd ok', 'filtered 0']).takeFdsError).toBeNull()
    const p = probe(['landlock 7', 'seccomp supervised', 'takefd errno 1 Operation not permitted', 'filtered 2', 'kernel 6.18.44'])
    expect(p.takeFdsError).toMatch(
      /^pidfd_getfd is refused here \(EPERM: a seccomp profile on this process, as docker's default answers it without CAP_SYS_PTRACE\); to fix: allow pidfd_getfd/,
    )
  })

  it('says the probe failed when its output cannot be read', () => {
    const p = parseProbe('', 'exit 125')
    expect(p.abi).toBe(0)
    expect(p.error).toBe("the helper's probe failed (exit 125)")
    expect(p.seccomp).toBe('none')
  })
})
