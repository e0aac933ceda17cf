import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import type { Socket } from 'node:net'
import { helperPath } from './probe.ts'

/** The process on the other end of a socket a server accepted. */
export interface Peer {
  pid: number
  uid: number
  gid: number
  /** Whether it runs with no_new_privs (every confined job does); null when unreadable. */
  isNoNewPrivs: boolean | null
  /** How many seccomp filters it runs under (a hands job: one more than its server); null when unreadable. */
  seccompFilters: number | null
  /** How deep in pid namespaces it is (a bubblewrap job: one deeper than its server); null when unreadable. */
  pidDepth: number | null
  /** Whether one of its ancestors is a hands job's relay. */
  isUnderRelay: boolean
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
const PEER_MS = 10_000

/** This process's own standing, read once: what a peer is compared with. */
let own: { isNoNewPrivs: boolean; seccompFilters: number; pidDepth: number } | undefined
function ownStanding(): { isNoNewPrivs: boolean; seccompFilters: number; pidDepth: number } {
  if (own !== undefined) return own
  let status = ''
  try {
    status = readFileSync('/proc/self/status', 'latin1')
  } catch {
    // no /proc: every comparison below counts this process as plain
  }
  const field = (key: string) => new RegExp(`^${key}:\\s*(.*)$`, 'm').exec(status)?.[1] ?? ''
  own = {
    isNoNewPrivs: field('NoNewPrivs') === '1',
    seccompFilters: Number(field('Seccomp_filters')) || 0,
    pidDepth: field('NSpid').split(/\s+/).filter(Boolean).length || 1,
  }
  return own
}

/** What the helper found: the peer, or (none found) the uid the kernel gives the socket, when it says. */
interface Found {
  peer: Peer | null
  ownerUid: number | null
}

/** Run the helper with `args` (and `stdin`), and read the peer it prints. */
function askHelper(args: string[], stdin: number | 'ignore'): Promise<Found> {
  const helper = helperPath()
  if (helper === null) return Promise.reject(new Error('the confinement helper that reads who connected is not built'))
  return new Promise((resolve, reject) => {
    const child = spawn(helper, args, { stdio: [stdin, 'pipe', 'pipe'], timeout: PEER_MS })
    let out = ''
    let err = ''
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d))
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d))
    child.once('error', reject)
    child.once('close', (code) => {
      const field = (name: string) => new RegExp(`^${name} (.*)$`, 'm').exec(out)?.[1] ?? null
      const pid = Number(field('pid'))
      if (code !== 0 || !Number.isInteger(pid) || pid < 0) {
        reject(new Error(`could not tell who connected: ${err.trim() || `exit ${code}`}`))
        return
      }
      if (pid === 0) {
        const uid = Number(field('uid'))
        resolve({ peer: null, ownerUid: Number.isInteger(uid) && uid >= 0 ? uid : null })
        return
      }
      const flag = (name: string) => {
        const v = field(name)
        return v === '1' ? true : v === '0' ? false : null
      }
      const count = (name: string) => {
        const v = Number(field(name))
        return Number.isInteger(v) && v >= 0 ? v : null
      }
      const cgroup = field('cgroup')
      const peer: Peer = {
        pid,
        uid: Number(field('uid')),
        gid: Number(field('gid')),
        isNoNewPrivs: flag('nnp'),
        seccompFilters: count('seccomp'),
        pidDepth: count('pidns'),
        isUnderRelay: field('relay') === '1',
        cgroup: cgroup === null || cgroup === '?' ? null : cgroup,
        hasMarker: flag('marker'),
        isAlive: field('alive') === '1',
      }
      resolve({ peer, ownerUid: peer.uid })
    })
  })
}

/** The socket's descriptor in this process (given a stream, spawn would stop the parent reading from it). */
function descriptorOf(socket: Socket): number {
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd
  if (typeof fd !== 'number' || fd < 0) throw new Error('the socket has no descriptor')
  return fd
}

/**
 * Describe the peer of a connected UNIX socket. Node cannot read SO_PEERCRED, so the helper does
 * (`hands-confine --peer` with the socket as its stdin, ~2 ms). Rejects when the helper is not
 * built or cannot tell.
 */
export async function describePeer(socket: Socket): Promise<Peer> {
  const { peer } = await askHelper(['--peer'], descriptorOf(socket))
  if (peer === null) throw new Error('could not tell who connected')
  return peer
}

/** True for a loopback address as Node reports a socket's remote one. */
const isLoopback = (address: string | undefined) => address !== undefined && (/^127\./.test(address) || address === '::1' || /^::ffff:127\./.test(address))

/**
 * Why the process on the client end of a TCP connection this process accepted may not use it,
 * or null when it may (see peerRefusal). Only loopback connections are checked: the process is
 * found through /proc (`hands-confine --tcp-peer`, ~5–15 ms). Where no process this one may see
 * holds the other end (another user's, when this server is not root), the kernel's record of the
 * socket's owner decides: another user is refused. A connection from another machine is not
 * this check's to judge (the front door's --allow-remote is).
 */
export async function tcpPeerRefusal(socket: Socket): Promise<string | null> {
  if (!isLoopback(socket.remoteAddress) || socket.localPort === undefined || socket.remotePort === undefined) return null
  const { peer, ownerUid } = await askHelper(['--tcp-peer', String(socket.localPort), String(socket.remotePort)], 'ignore')
  if (peer !== null) return peerRefusal(peer)
  const me = process.geteuid?.() ?? -1
  return ownerUid !== null && ownerUid !== me && ownerUid !== 0 ? `the process that connected runs as another user (uid ${ownerUid})` : null
}

/**
 * Why `peer` may not drive this server's shells, or null when it may: only the user's own
 * processes (or root's) outside every hands job and sandbox may. A process of any hands job, of
 * this server or another, confined or not, is refused: it runs in a job's cgroup, under a job's
 * relay, with a job's marker, under more seccomp filters or deeper in pid namespaces than this
 * server, or with no_new_privs where this server has none.
 */
export function peerRefusal(peer: Peer): string | null {
  const me = process.geteuid?.() ?? -1
  const standing = ownStanding()
  const who = `the process that connected (pid ${peer.pid})`
  if (!peer.isAlive) return `${who} ended before it could be checked`
  if (peer.uid !== me && peer.uid !== 0) return `${who} runs as another user (uid ${peer.uid})`
  if (peer.cgroup !== null && JOB_CGROUP.test(peer.cgroup)) return `${who} runs inside a hands job`
  if (peer.isUnderRelay) return `${who} runs inside a hands job (under a job's relay)`
  if (peer.hasMarker === true) return `${who} runs inside a hands job (its environment carries a job's marker)`
  if (peer.seccompFilters !== null && peer.seccompFilters > standing.seccompFilters)
    return `${who} runs sandboxed (under more seccomp filters than this server), as every command hands runs does`
  if (peer.pidDepth !== null && peer.pidDepth > standing.pidDepth) return `${who} runs sandboxed (in a pid namespace of its own), as a bubblewrap job does`
  if (peer.isNoNewPrivs === true && !standing.isNoNewPrivs) return `${who} runs sandboxed (no_new_privs), as every confined command does`
  if (peer.isNoNewPrivs === null || peer.hasMarker === null || peer.seccompFilters === null) return `${who} could not be inspected`
  return null
}
