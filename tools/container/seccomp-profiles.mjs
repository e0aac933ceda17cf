#!/usr/bin/env node
// Seccomp profiles that take from a container what hands confines commands with, derived from an
// engine's default profile (podman's is /usr/share/containers/seccomp.json; docker's is
// moby/profiles seccomp/default.json). Used by check.sh, one `--security-opt seccomp=FILE` each:
//
//   node tools/container/seccomp-profiles.mjs DEFAULT.json OUTDIR
//
//   landlock-enosys.json          landlock_create_ruleset, landlock_add_rule, landlock_restrict_self
//                                 fail with ENOSYS: a profile that predates them (podman's answer to
//                                 an unlisted call)
//   landlock-eperm.json           the same calls fail with EPERM (docker's answer to an unlisted call)
//   seccomp-eperm.json            seccomp(2) and prctl(PR_SET_SECCOMP) fail with EPERM: no filter of
//                                 the container's own (Landlock stays allowed)
//   landlock-seccomp-eperm.json   both: nothing hands confines with is left
//
// Each removes the calls from every allowing rule and adds an explicit errno rule for them, so the
// answer does not depend on the profile's default action. Prints one line per file written.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const LANDLOCK = ['landlock_create_ruleset', 'landlock_add_rule', 'landlock_restrict_self']
const ENOSYS = 38
const EPERM = 1
const PR_SET_SECCOMP = 22

/** A copy of `profile` whose allowing rules no longer name `names`. */
function withoutAllowed(profile, names) {
  const drop = new Set(names)
  const syscalls = []
  for (const rule of profile.syscalls ?? []) {
    if (rule.action !== 'SCMP_ACT_ALLOW') {
      syscalls.push(rule)
      continue
    }
    const kept = (rule.names ?? []).filter((n) => !drop.has(n))
    if (kept.length > 0) syscalls.push({ ...rule, names: kept })
  }
  return { ...profile, syscalls }
}

/** `profile` with the Landlock calls answered by `errno`. */
function refuseLandlock(profile, errno) {
  const out = withoutAllowed(profile, LANDLOCK)
  return { ...out, syscalls: [...out.syscalls, { names: LANDLOCK, action: 'SCMP_ACT_ERRNO', errnoRet: errno }] }
}

/** `profile` with seccomp(2), and prctl's PR_SET_SECCOMP (every other prctl still allowed), answered by `errno`. */
function refuseSeccomp(profile, errno) {
  const prctlAllowed = (profile.syscalls ?? []).some((r) => r.action === 'SCMP_ACT_ALLOW' && (r.names ?? []).includes('prctl') && !r.args?.length)
  const out = withoutAllowed(profile, prctlAllowed ? ['seccomp', 'prctl'] : ['seccomp'])
  const rules = [{ names: ['seccomp'], action: 'SCMP_ACT_ERRNO', errnoRet: errno }]
  if (prctlAllowed) {
    rules.push(
      { names: ['prctl'], action: 'SCMP_ACT_ALLOW', args: [{ index: 0, value: PR_SET_SECCOMP, op: 'SCMP_CMP_NE' }] },
      { names: ['prctl'], action: 'SCMP_ACT_ERRNO', errnoRet: errno, args: [{ index: 0, value: PR_SET_SECCOMP, op: 'SCMP_CMP_EQ' }] },
    )
  }
  return { ...out, syscalls: [...out.syscalls, ...rules] }
}

const [source, outDir] = process.argv.slice(2)
if (source === undefined || outDir === undefined) {
  process.stderr.write('usage: seccomp-profiles.mjs DEFAULT.json OUTDIR\n')
  process.exit(2)
}
const base = JSON.parse(readFileSync(source, 'utf8'))
const allowed = new Set((base.syscalls ?? []).filter((r) => r.action === 'SCMP_ACT_ALLOW').flatMap((r) => r.names ?? []))
for (const name of [...LANDLOCK, 'seccomp']) {
  if (!allowed.has(name)) process.stderr.write(`seccomp-profiles: ${source} does not allow ${name}: its own default already refuses it\n`)
}
const profiles = {
  'landlock-enosys.json': refuseLandlock(base, ENOSYS),
  'landlock-eperm.json': refuseLandlock(base, EPERM),
  'seccomp-eperm.json': refuseSeccomp(base, EPERM),
  'landlock-seccomp-eperm.json': refuseSeccomp(refuseLandlock(base, EPERM), EPERM),
}
for (const [name, profile] of Object.entries(profiles)) {
  const file = join(outDir, name)
  writeFileSync(file, `${JSON.stringify(profile, null, 2)}\n`)
  process.stdout.write(`${file}\n`)
}
