import { lstatSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { isAbsolute, join, resolve } from 'node:path'
import { readMounts, type Mount } from '../tree/mountinfo.ts'
import { mountAliases } from './mounts.ts'

/** The usual secret stores of a user, relative to the home directory; hidden from every command. */
export const SECRET_STORES: readonly string[] = [
  '.ssh',
  '.aws',
  '.gnupg',
  '.config/gcloud',
  '.azure',
  '.kube',
  '.docker/config.json',
  '.netrc',
  '.npmrc',
  '.pypirc',
  '.git-credentials',
  '.config/gh',
  '.config/hub',
  '.config/op',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.gem/credentials',
  '.terraform.d/credentials.tfrc.json',
  '.vault-token',
  '.password-store',
  '.local/share/keyrings',
  '.claude/.credentials.json',
  '.codex/auth.json',
]

/**
 * Device nodes a command may open for reading and writing; every other node under /dev is hidden.
 * `/dev/tty` is the job's own controlling terminal, `/dev/ptmx` makes new terminals (opened through
 * their master, TIOCGPTPEER, as glibc's openpty does); the terminals under /dev/pts are not here: a
 * background shell's job may open its own one, nothing else may.
 */
export const OPEN_DEVICES: readonly string[] = ['/dev/null', '/dev/zero', '/dev/full', '/dev/tty', '/dev/ptmx']
/** Device nodes a command may read. (/dev/fd, /dev/stdin… are symlinks into /proc, which stays readable.) */
export const READ_DEVICES: readonly string[] = ['/dev/random', '/dev/urandom']

/**
 * The capabilities a confined job keeps (they matter only when hands runs as root), in every
 * mechanism: owning, reading and writing files whatever their mode, changing user and group (a
 * package manager dropping to its own user), signals inside its tree, dropping capabilities, low
 * ports, chroot and audit messages. The helper (native/main.c) keeps the same list. Everything
 * else acts outside the roots: the clock, immutable files, raw sockets, any process's priority and
 * limits, file capabilities, modules, raw devices, mounts, tracing, reading files by handle.
 */
export const JOB_CAPABILITIES: readonly string[] = [
  'CAP_CHOWN',
  'CAP_DAC_OVERRIDE',
  'CAP_FOWNER',
  'CAP_FSETID',
  'CAP_KILL',
  'CAP_SETGID',
  'CAP_SETUID',
  'CAP_SETPCAP',
  'CAP_NET_BIND_SERVICE',
  'CAP_SYS_CHROOT',
  'CAP_AUDIT_WRITE',
]

/** What a confined command may do, as real absolute paths. */
export interface ConfinePolicy {
  /** The allowed roots, in the host's order. */
  roots: string[]
  /** The session's private temporary directory (the command's TMPDIR). */
  tmpDir: string
  /** Extra writable directories the host allowed (`--allow-write`). */
  allowWrite: string[]
  /** Every path a command may write under: roots, TMPDIR, the host's extra paths. */
  writable: string[]
  /** Socket files, or directories of them, the host lets commands connect to beside the roots and TMPDIR (`--allow-socket`). */
  allowSockets: string[]
  /** Where a command may connect to a UNIX socket: the roots, TMPDIR, the host's socket paths. */
  socketPlaces: string[]
  /** The secret stores found under the user's home directories, hidden from reads. */
  secrets: string[]
  /** Extra hidden paths the host named (`--deny-read`). */
  denyRead: string[]
  /** hands' own directories commands must not read: where attach sockets keep their keys. */
  privateDirs: string[]
  /** The other names the mount table gives hidden paths (a second mount of a home directory); each is in its list above too. */
  aliases: string[]
  /** TCP bind and connect allowed. */
  isNetwork: boolean
}

/**
 * What `path` really is; the absolute path as given when it cannot be resolved. A missing path is
 * told by an lstat first: realpath would say the same by throwing, which costs ~10 µs a path, and
 * most secret stores are missing on any one machine.
 */
function real(path: string): string {
  const abs = isAbsolute(path) ? path : resolve(path)
  try {
    if (lstatSync(abs, { throwIfNoEntry: false }) === undefined) return abs
    return realpathSync.native(abs)
  } catch {
    return abs
  }
}

function unique(paths: string[]): string[] {
  return [...new Set(paths)]
}

/**
 * The policy for one session. `homes` are the home directories whose secret stores are hidden
 * (the user running hands, and the HOME commands see). Paths are resolved to what they really
 * are, so a symlinked root or secret store is confined by its target.
 */
export function buildPolicy(input: {
  roots: string[]
  tmpDir: string
  allowWrite: string[]
  /** Socket files or directories commands may connect to beside the roots and TMPDIR; default none. */
  allowSockets?: string[]
  denyRead: string[]
  privateDirs: string[]
  homes: string[]
  isNetwork: boolean
  /** The mount table (default: this process's). */
  mounts?: readonly Mount[]
}): ConfinePolicy {
  const roots = input.roots.map(real)
  const allowWrite = unique(input.allowWrite.map(real))
  const tmpDir = real(input.tmpDir)
  const homes = unique(input.homes.filter((h) => h !== '' && h !== '/'))
  const secrets = unique(homes.flatMap((home) => SECRET_STORES.map((s) => real(join(home, s)))))
  const denyRead = unique(input.denyRead.map(real))
  const privateDirs = unique(input.privateDirs.map(real))
  // What is hidden stays hidden under every name the mount table gives it now.
  const mounts = input.mounts ?? readMounts()
  const more = (paths: string[]) => mountAliases(paths, mounts)
  const [secretAliases, denyAliases, privateAliases] = [more(secrets), more(denyRead), more(privateDirs)]
  return {
    roots,
    tmpDir,
    allowWrite,
    writable: unique([...roots, tmpDir, ...allowWrite]),
    allowSockets: unique((input.allowSockets ?? []).map(real)),
    socketPlaces: unique([...roots, tmpDir, ...(input.allowSockets ?? []).map(real)]),
    secrets: unique([...secrets, ...secretAliases]),
    denyRead: unique([...denyRead, ...denyAliases]),
    privateDirs: unique([...privateDirs, ...privateAliases]),
    aliases: unique([...secretAliases, ...denyAliases, ...privateAliases]),
    isNetwork: input.isNetwork,
  }
}

/**
 * Where hands servers keep their attach sockets and keys by default (`$XDG_RUNTIME_DIR/hands`,
 * `<tmpdir>/hands-<uid>`): hidden from every command, whichever server runs it, so no command can
 * read the key another server's attach socket asks for.
 */
export function defaultPrivateDirs(env: Record<string, string | undefined>): string[] {
  const runtime = env['XDG_RUNTIME_DIR']
  return unique([...(runtime ? [join(runtime, 'hands')] : []), join(tmpdir(), `hands-${process.getuid?.() ?? 'user'}`)])
}

/** Every path hidden from commands: the secret stores, the host's --deny-read paths, hands' own directories. */
export function hiddenPaths(policy: ConfinePolicy): string[] {
  return [...policy.secrets, ...policy.denyRead, ...policy.privateDirs]
}

/** True when `path` is `dir` or lies under it by whole path segments. */
export function isUnder(dir: string, path: string): boolean {
  return path === dir || path.startsWith(dir === '/' ? '/' : `${dir}/`)
}

/** The writable path that holds `path`, or undefined. */
export function writableHolding(policy: ConfinePolicy, path: string): string | undefined {
  return policy.writable.find((w) => isUnder(w, path))
}

/** The hidden path (secret store or --deny-read) that holds `path`, or undefined. */
export function hiddenHolding(policy: ConfinePolicy, path: string): string | undefined {
  return hiddenPaths(policy).find((h) => isUnder(h, path))
}

/** The hidden paths counted for a summary: secret stores, the host's paths, and the names second mounts give them. */
export function hiddenCounts(policy: ConfinePolicy): string {
  const n = (k: number, what: string) => `${k} ${what}${k === 1 ? '' : 's'}`
  const own = (list: string[]) => list.filter((p) => !policy.aliases.includes(p)).length
  const denied = own(policy.denyRead)
  return [
    n(own(policy.secrets), 'secret store'),
    ...(denied > 0 ? [n(denied, '--deny-read path')] : []),
    ...(policy.aliases.length > 0 ? [`${n(policy.aliases.length, 'other name')} the mount table gives them`] : []),
  ].join(', ')
}

/** The helper's arguments that guard a job's sockets: only socket files under the roots, TMPDIR and the host's socket paths. */
export function socketGuard(policy: ConfinePolicy): string[] {
  return ['--guard-sockets', ...policy.socketPlaces.flatMap((p) => ['--socket-dir', p])]
}

/** The gap where the relay cannot copy a job's descriptors: it checks each connect and the kernel makes it. */
export function raceGap(why: string): string {
  return `a command that races its own threads against the check of a connect can reach a socket the check refused: the relay checks each connect and lets the kernel make it, since ${why}`
}
