import { readdirSync, readFileSync } from 'node:fs'

/** Pids of every process visible in /proc. */
export function allPids(): number[] {
  const out: number[] = []
  for (const name of readdirSync('/proc')) {
    const c = name.charCodeAt(0)
    if (c >= 48 && c <= 57) out.push(Number(name))
  }
  return out
}

/** True while `pid` exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    return stat[stat.lastIndexOf(')') + 2] !== 'Z'
  } catch {
    return false
  }
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
