import { homedir, tmpdir } from 'node:os'
import { resolveOptions, type ShellRuntimeOptions } from '../runtime/options.ts'
import { findBash } from '../runtime/find-bash.ts'
import { chooseConfiner } from './choose.ts'
import type { ConfineKind } from './confiner.ts'
import { buildPolicy, defaultPrivateDirs } from './policy.ts'
import { findWritableCgroup } from '../tree/find-cgroup.ts'

/** How commands of a runtime are confined, for hosts to show. */
export interface Confinement {
  kind: ConfineKind
  /** Lines saying what confines commands, what they may write, what is hidden, and the gaps. */
  summary: string
}

/**
 * The confinement a runtime with these options would use here, without starting one (for
 * `hands tools`). Throws like createShellRuntime when an explicit mechanism cannot work.
 */
export function describeConfinement(options: ShellRuntimeOptions): Confinement {
  const o = resolveOptions(options, tmpdir())
  const policy = buildPolicy({
    roots: o.roots,
    tmpDir: `${o.spoolParent}/hands-tmp-…`,
    allowWrite: o.allowWrite,
    denyRead: o.denyRead,
    privateDirs: [...defaultPrivateDirs(o.hostEnv), ...o.privateDirs],
    homes: [homedir(), o.hostEnv['HOME'] ?? ''].filter((h) => h !== ''),
    isNetwork: o.isNetwork,
  })
  const confiner = chooseConfiner({
    mode: o.confine,
    policy,
    env: process.env,
    bash: o.bash ?? findBash(o.hostEnv),
    spoolDir: null,
    cgroupMount: o.tree === 'marker' ? null : (findWritableCgroup()?.mount ?? null),
    isChanges: o.isChanges,
  })
  return { kind: confiner.kind, summary: confiner.summary }
}
