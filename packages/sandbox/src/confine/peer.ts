import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'
import type { Socket } from 'node:net'
import { MARKER_VAR } from '../tree/marker-keeper.ts'
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

/** A process the helper found allowed, and its start time (a pid reused by another process has another). */
interface Allowed {
  peer: Peer
  start: string
}

/** The processes lately found allowed to connect over TCP, newest first: a client opens many connections. */
const allowed: Allowed[] = []
const ALLOWED_KEPT = 4

/** Field 22 of /proc/PID/stat (the start time, in clock ticks after boot); null once the process is gone. */
function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null
  } catch {
    return null
  }
}

/** The inode of the socket of the TCP connection from local port `client` to remote port `server` (/proc/net/tcp, then tcp6); null when not found. */
function tcpInode(client: number, server: number): string | null {
  const hex = (port: number) => `:${port.toString(16).toUpperCase().padStart(4, '0')}`
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string
    try {
      text = readFileSync(table, 'latin1')
    } catch {
      continue
    }
    for (const line of text.split('\n')) {
      const f = line.trim().split(/\s+/)
      if (f.length >= 10 && f[1]?.endsWith(hex(client)) && f[2]?.endsWith(hex(server)) && f[9] !== '0') return f[9] as string
    }
  }
  return null
}

/** True when process `pid` holds a descriptor on the socket `link` (`socket:[INODE]`). */
function holdsSocket(pid: number, link: string): boolean {
  let fds: string[]
  try {
    fds = readdirSync(`/proc/${pid}/fd`)
  } catch {
    return false
  }
  for (const fd of fds) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`) === link) return true
    } catch {
      // closed meanwhile
    }
  }
  return false
}

/**
 * `a` as it stands now, read through /proc, when it is still the same process (same start time
 * before and after the reads) and holds the socket `link`; null otherwise. What a process can
 * change about itself is read again (its uid, no_new_privs, seccomp filters, cgroup and
 * environment); its pid namespace and ancestors (a relay above it) are its own for life.
 */
function standingNow(a: Allowed, link: string): Peer | null {
  const { pid } = a.peer
  if (startTime(pid) !== a.start || !holdsSocket(pid, link)) return null
  let status: string
  let cgroup: string | null
  let environ: string | null
  try {
    status = readFileSync(`/proc/${pid}/status`, 'latin1')
    cgroup = /^0::(.*)$/m.exec(readFileSync(`/proc/${pid}/cgroup`, 'latin1'))?.[1] ?? null
    environ = readFileSync(`/proc/${pid}/environ`, 'latin1')
  } catch {
    return null
  }
  if (startTime(pid) !== a.start) return null
  const field = (key: string) => new RegExp(`^${key}:\\s*(\\d+)`, 'm').exec(status)?.[1]
  const number = (key: string) => {
    const v = field(key)
    return v === undefined ? null : Number(v)
  }
  return {
    ...a.peer,
    uid: number('Uid') ?? -1,
    gid: number('Gid') ?? -1,
    isNoNewPrivs: field('NoNewPrivs') === undefined ? null : field('NoNewPrivs') === '1',
    seccompFilters: number('Seccomp_filters'),
    cgroup,
    hasMarker: environ.startsWith(`${MARKER_VAR}=`) || environ.includes(`\0${MARKER_VAR}=`),
    isAlive: true,
  }
}

/**
 * Why the process on the client end of a TCP connection this process accepted may not use it,
 * or null when it may (see peerRefusal). Only loopback connections are checked: the process is
 * found through /proc (`hands-confine --tcp-peer`, ~5–15 ms, most of it the fork of this
 * process). A client opens many connections (an MCP client one or two per session), so the few
 * processes lately found allowed are looked at first, here: when one of them (the same process:
 * same start time) holds the connection's socket and still stands as it did (read again), it is
 * allowed without the helper. Where no process this one may see holds the other end (another
 * user's, when this server is not root), the kernel's record of the socket's owner decides:
 * another user is refused. A connection from another machine is not this check's to judge (the
 * front door's --allow-remote is).
 */
export async function tcpPeerRefusal(socket: Socket): Promise<string | null> {
  if (!isLoopback(socket.remoteAddress) || socket.localPort === undefined || socket.remotePort === undefined) return null
  const inode = allowed.length === 0 ? null : tcpInode(socket.remotePort, socket.localPort)
  if (inode !== null) {
    for (const a of allowed) {
      const now = standingNow(a, `socket:[${inode}]`)
      if (now !== null && peerRefusal(now) === null) return null
    }
  }
  const { peer, ownerUid } = await askHelper(['--tcp-peer', String(socket.localPort), String(socket.remotePort)], 'ignore')
  if (peer !== null) {
    const refusal = peerRefusal(peer)
    const start = refusal === null ? startTime(peer.pid) : null
    if (start !== null) {
      const at = allowed.findIndex((a) => a.peer.pid === peer.pid)
      if (at >= 0) allowed.splice(at, 1)
      allowed.unshift({ peer, start })
      allowed.length = Math.min(allowed.length, ALLOWED_KEPT)
    }
    return refusal
  }
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
