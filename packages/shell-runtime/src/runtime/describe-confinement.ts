import { homedir, tmpdir } from 'node:os'
import { resolveOptions, type ShellRuntimeOptions } from './options.ts'
import {
  findBash,
  chooseConfiner,
  type ConfineKind,
  buildPolicy,
  defaultPrivateDirs,
  findWritableCgroup,
  treeSummary,
  checkSessionLimits,
} from '@hands/sandbox/parts'

/** How commands of a runtime are confined, for hosts to show. */
export interface Confinement {
  /** The mechanism; `unavailable` when none works here and the host has not switched confinement off (shell tools refuse every call). */
  kind: ConfineKind | 'unavailable'
  /** Lines saying what confines commands, what they may write, what is hidden, and the gaps; or what is missing and the fix. */
  summary: string
}

/**
 * The confinement a runtime with these options would use here, without starting one (for
 * `hands tools`). Throws like createShellRuntime when an explicit mechanism, or a setting the host
 * gave, cannot work here; says `unavailable` (with what is missing) where createShellRuntime's shell
 * tools would refuse every call.
 */
export function describeConfinement(options: ShellRuntimeOptions): Confinement {
  const o = resolveOptions(options, tmpdir())
  const policy = buildPolicy({
    roots: o.roots,
    tmpDir: `${o.spoolParent}/hands-tmp-…`,
    allowWrite: o.allowWrite,
    allowSockets: o.allowSockets,
    denyRead: o.denyRead,
    privateDirs: [...defaultPrivateDirs(o.hostEnv), ...o.privateDirs],
    homes: [homedir(), o.hostEnv['HOME'] ?? ''].filter((h) => h !== ''),
    isNetwork: o.isNetwork,
  })
  const cgroup = o.tree === 'marker' ? null : findWritableCgroup()
  checkSessionLimits(o, cgroup?.dir ?? null)
  const confiner = chooseConfiner({
    mode: o.confine,
    policy,
    env: process.env,
    bash: o.bash ?? findBash(o.hostEnv),
    spoolDir: null,
    cgroupMount: cgroup?.mount ?? null,
    isChanges: o.isChanges,
  })
  if (confiner.kind === 'unavailable') return { kind: confiner.kind, summary: confiner.summary }
  return { kind: confiner.kind, summary: `${confiner.summary}\n${treeSummary(cgroup === null ? 'marker' : 'cgroup', o.processLimit !== undefined)}` }
}
