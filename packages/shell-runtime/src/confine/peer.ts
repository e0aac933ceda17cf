import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import type { Socket } from 'node:net'
import { helperPath } from './probe.ts'

/** The process on the other end of a UNIX socket, as the kernel recorded it when it connected. */
export interface Peer {
  pid: number
  uid: number
  gid: number
  /** Whether it runs with no_new_privs (every confined job does); null when unreadable. */
  isNoNewPrivs: boolean | null
  /** Its cgroup v2 path; null when unreadable. */
  cgroup: string | null
  /** Whether its environment carries a hands job's marker; null when unreadable. */
  hasMarker: boolean | null
  /** False when it exited before it could be described (what was read may be another's). */
  isAlive: boolean
}

/** A hands job's cgroup, of any server: `…/hands-<pid>-<hex>/j<n>`. */
const JOB_CGROUP = /\/hands-\d+-[0-9a-f]+\/j\d+$/

/** How long describing a peer may take before the connection is refused. */
const PEER_MS = 5000

function ownNoNewPrivs(): boolean {
  try {
    return /^NoNewPrivs:\s*1$/m.test(readFileSync('/proc/self/status', 'latin1'))
  } catch {
    return false
  }
}

/**
 * Describe the peer of a connected UNIX socket. Node cannot read SO_PEERCRED, so the helper does
 * (`hands-confine --peer` with the socket as its stdin, ~2 ms). Rejects when the helper is not
 * built or cannot tell.
 */
export function describePeer(socket: Socket): Promise<Peer> {
  const helper = helperPath()
  if (helper === null) return Promise.reject(new Error('the confinement helper that reads who connected is not built'))
  // The descriptor, not the socket: given a stream, spawn stops the parent reading from it.
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd
  if (typeof fd !== 'number' || fd < 0) return Promise.reject(new Error('the socket has no descriptor'))
  return new Promise((resolve, reject) => {
    const child = spawn(helper, ['--peer'], { stdio: [fd, 'pipe', 'pipe'], timeout: PEER_MS })
    let out = ''
    let err = ''
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d))
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d))
    child.once('error', reject)
    child.once('close', (code) => {
      const field = (name: string) => new RegExp(`^${name} (.*)$`, 'm').exec(out)?.[1] ?? null
      const pid = Number(field('pid'))
      if (code !== 0 || !Number.isInteger(pid) || pid <= 0) {
        reject(new Error(`could not tell who connected: ${err.trim() || `exit ${code}`}`))
        return
      }
      const flag = (name: string) => {
        const v = field(name)
        return v === '1' ? true : v === '0' ? false : null
      }
      const cgroup = field('cgroup')
      resolve({
        pid,
        uid: Number(field('uid')),
        gid: Number(field('gid')),
        isNoNewPrivs: flag('nnp'),
        cgroup: cgroup === null || cgroup === '?' ? null : cgroup,
        hasMarker: flag('marker'),
        isAlive: field('alive') === '1',
      })
    })
  })
}

/**
 * Why `peer` may not drive this server's shells, or null when it may: only the user's own
 * processes (or root's) outside every hands job and sandbox may. A command of any hands server —
 * confined or not — is refused: it runs in a job's cgroup, carries a job's marker, or runs with
 * no_new_privs where this server does not (every Landlock and bubblewrap job does).
 */
export function peerRefusal(peer: Peer): string | null {
  const me = process.geteuid?.() ?? -1
  if (!peer.isAlive) return `the process that connected (pid ${peer.pid}) ended before it could be checked`
  if (peer.uid !== me && peer.uid !== 0) return `the process that connected (pid ${peer.pid}) runs as another user (uid ${peer.uid})`
  if (peer.cgroup !== null && JOB_CGROUP.test(peer.cgroup)) return `the process that connected (pid ${peer.pid}) runs inside a hands job`
  if (peer.hasMarker === true) return `the process that connected (pid ${peer.pid}) runs inside a hands job (its environment carries a job's marker)`
  if (peer.isNoNewPrivs === true && !ownNoNewPrivs())
    return `the process that connected (pid ${peer.pid}) runs sandboxed (no_new_privs), as every confined command does`
  if (peer.isNoNewPrivs === null || peer.hasMarker === null) return `the process that connected (pid ${peer.pid}) could not be inspected`
  return null
}
