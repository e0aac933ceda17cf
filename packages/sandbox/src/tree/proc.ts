import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs'

let scratch = Buffer.allocUnsafe(16 * 1024)

/**
 * The whole content of a /proc file through one reused buffer (open, read, close: no stat and no
 * allocation per file, which matters when scanning every process). The view is valid until the
 * next call; null when the file cannot be read.
 */
export function readProcFile(path: string): Buffer | null {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch {
    return null
  }
  try {
    let used = 0
    for (;;) {
      if (used === scratch.length) {
        const bigger = Buffer.allocUnsafe(scratch.length * 2)
        scratch.copy(bigger, 0, 0, used)
        scratch = bigger
      }
      const n = readSync(fd, scratch, used, scratch.length - used, null)
      if (n === 0) return scratch.subarray(0, used)
      used += n
    }
  } catch {
    return null
  } finally {
    closeSync(fd)
  }
}

/** Pids of every process visible in /proc. */
export function allPids(): number[] {
  const out: number[] = []
  for (const name of readdirSync('/proc')) {
    const c = name.charCodeAt(0)
    if (c >= 48 && c <= 57) out.push(Number(name))
  }
  return out
}

/**
 * The fields of /proc/<pid>/stat after the command name, split on spaces: index 0 is field 3
 * (state), 1 the parent pid, 6 the flags, 47 and 48 env_start and env_end. Null when it cannot be read.
 */
export function statFields(pid: number): string[] | null {
  const stat = readProcFile(`/proc/${pid}/stat`)?.toString('latin1')
  return stat === undefined ? null : stat.slice(stat.lastIndexOf(')') + 2).split(' ')
}

/** True while `pid` exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  const fields = statFields(pid)
  return fields !== null && fields[0] !== 'Z'
}

/** A short, human description of a process: its command line, cut to `max` characters. */
export function describePid(pid: number, max = 60): string {
  let text = ''
  try {
    text = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0+$/, '').replaceAll('\0', ' ')
  } catch {
    // gone
  }
  if (text === '') {
    try {
      text = readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
    } catch {
      text = '?'
    }
  }
  if (text.length > max) text = `${text.slice(0, max - 1)}…`
  return `\`${text}\` (pid ${pid})`
}

/** Send `signal` to `pid`; false when the process is gone or not ours. */
export function trySignal(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal)
    return true
  } catch {
    return false
  }
}
