import { closeSync, openSync, readSync, statSync } from 'node:fs'
import { readProcFile } from '@hands/sandbox/parts'

/**
 * Whether one process is asleep waiting for its terminal to give it input, read from what Linux
 * shows of a sleeping process: the call it is blocked in (/proc/PID/syscall) and the descriptors
 * that call waits on. Measured on Linux 6.18 (x86-64), each kind of waiting shows up as:
 *
 *   - bash `read`, Python `input()`, `getpass`, `less`: `read` on the terminal (fd 0, or
 *     /dev/tty opened for a password);
 *   - vim, bash -i and the Python REPL (readline): `pselect6` with the terminal in the read set;
 *   - a Node program reading stdin: `epoll_pwait` on an epoll whose interest list (fdinfo) holds
 *     the terminal;
 *   - `sleep`: `clock_nanosleep`; a socket read: `recvfrom`; a busy loop: `running`.
 *
 * /proc/PID/wchan only says `wait_woken` (a terminal read and a socket read alike) or
 * `poll_schedule_timeout`, so it is not used. A wait that also holds a socket is a server that
 * happens to watch its terminal (a dev server's key shortcuts), not a prompt: it does not count.
 */

/** System call numbers, by the architecture Node reports. */
interface CallNumbers {
  /** read, pread64, readv, preadv, preadv2: the descriptor is argument 0. */
  read: readonly number[]
  /** select, pselect6: (nfds, readfds, …). */
  select: readonly number[]
  /** poll, ppoll: (fds, nfds, …). */
  poll: readonly number[]
  /** epoll_wait, epoll_pwait, epoll_pwait2: (epfd, …). */
  epoll: readonly number[]
}

const CALLS: Partial<Record<NodeJS.Architecture, CallNumbers>> = {
  x64: { read: [0, 17, 19, 295, 327], select: [23, 270], poll: [7, 271], epoll: [232, 281, 441] },
  arm64: { read: [63, 65, 67, 69, 286], select: [72], poll: [73], epoll: [22, 441] },
}

/** The device number of /dev/tty (5, 0): a process's own controlling terminal. */
const DEV_TTY = (5 << 8) | 0
/** POLLIN | POLLPRI | POLLRDNORM: a poll entry that waits for something to read. */
const POLL_READ = 0x1 | 0x2 | 0x40
/** EPOLLIN | EPOLLPRI. */
const EPOLL_READ = 0x1 | 0x2
/** The most descriptors one wait is looked through (a larger set is a server, not a prompt). */
const MAX_FDS = 4096

/** What a descriptor of the process is, as far as waiting for input goes. */
type FdKind = 'terminal' | 'socket' | 'other'

/**
 * True when process `pid`, of the foreground group of terminal `ttyNr` (its device number as
 * /proc/PID/stat gives it), is blocked waiting for input from that terminal; false when it is
 * blocked on something else or not blocked; null when Linux does not let hands look (a
 * set-user-ID program such as sudo, run by another user) or the architecture's call numbers are
 * not known.
 */
export function isWaitingOnTerminal(pid: number, ttyNr: number): boolean | null {
  const calls = CALLS[process.arch]
  if (calls === undefined) return null
  const text = readProcFile(`/proc/${pid}/syscall`)?.toString('latin1')
  if (text === undefined) return null
  // `running`, or `-1 sp pc` for a process blocked outside a system call (a page fault).
  const parts = text.trim().split(' ')
  const nr = Number(parts[0])
  if (parts.length < 7 || !Number.isInteger(nr) || nr < 0) return false
  const arg = (i: number) => Number.parseInt(parts[i + 1] as string, 16)
  const kind = (fd: number) => fdKind(pid, fd, ttyNr)
  if (calls.read.includes(nr)) return kind(arg(0)) === 'terminal'
  let fds: number[] | null = null
  if (calls.select.includes(nr)) fds = selectFds(pid, arg(0), arg(1))
  else if (calls.poll.includes(nr)) fds = pollFds(pid, arg(0), arg(1))
  else if (calls.epoll.includes(nr)) fds = epollFds(pid, arg(0))
  else return false
  if (fds === null) return null
  let isTerminal = false
  for (const fd of fds) {
    const k = kind(fd)
    if (k === 'socket') return false
    if (k === 'terminal') isTerminal = true
  }
  return isTerminal
}

function fdKind(pid: number, fd: number, ttyNr: number): FdKind {
  const st = statSync(`/proc/${pid}/fd/${fd}`, { throwIfNoEntry: false })
  if (st === undefined) return 'other'
  if (st.isSocket()) return 'socket'
  // /dev/tty is the caller's controlling terminal, which for a process of the terminal's
  // foreground group is this terminal.
  if (st.isCharacterDevice() && (st.rdev === ttyNr || st.rdev === DEV_TTY)) return 'terminal'
  return 'other'
}

/** Bytes of the process's memory at `address`; null when it may not be read. */
function peek(pid: number, address: number, length: number): Buffer | null {
  if (address === 0 || length <= 0 || !Number.isSafeInteger(address)) return null
  let fd: number
  try {
    fd = openSync(`/proc/${pid}/mem`, 'r')
  } catch {
    return null
  }
  try {
    const buf = Buffer.alloc(length)
    return readSync(fd, buf, 0, length, address) === length ? buf : null
  } catch {
    return null
  } finally {
    closeSync(fd)
  }
}

/** The descriptors in a select read set (`nfds` bits at `readfds`). */
function selectFds(pid: number, nfds: number, readfds: number): number[] | null {
  if (readfds === 0) return []
  const n = Math.min(nfds, MAX_FDS)
  const bits = peek(pid, readfds, Math.ceil(n / 64) * 8)
  if (bits === null) return null
  const out: number[] = []
  for (let fd = 0; fd < n; fd++) if (((bits[fd >> 3] as number) & (1 << (fd & 7))) !== 0) out.push(fd)
  return out
}

/** The descriptors a poll array (`nfds` entries of `{int fd; short events; short revents}`) waits to read. */
function pollFds(pid: number, address: number, nfds: number): number[] | null {
  const n = Math.min(nfds, MAX_FDS)
  if (n === 0) return []
  const entries = peek(pid, address, n * 8)
  if (entries === null) return null
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const fd = entries.readInt32LE(i * 8)
    if (fd >= 0 && (entries.readInt16LE(i * 8 + 4) & POLL_READ) !== 0) out.push(fd)
  }
  return out
}

/** The descriptors an epoll instance watches for reading, from its fdinfo (`tfd: N events: HEX …` lines). */
function epollFds(pid: number, epfd: number): number[] | null {
  const info = readProcFile(`/proc/${pid}/fdinfo/${epfd}`)?.toString('latin1')
  if (info === undefined) return null
  const out: number[] = []
  for (const m of info.matchAll(/^tfd:\s*(\d+)\s+events:\s*([0-9a-f]+)/gm)) {
    if ((Number.parseInt(m[2] as string, 16) & EPOLL_READ) !== 0) out.push(Number(m[1]))
    if (out.length >= MAX_FDS) break
  }
  return out
}
