import { execFile } from 'node:child_process'
import { dirname, join } from 'node:path'
import { type JobTree, readProcFile } from '@hands/sandbox/parts'
import { isWaitingOnTerminal } from './terminal-wait.ts'

/** How a background shell's process tree is doing now, as facts. */
export interface TreeFacts {
  /** Processes of the tree alive now (zombies and hands' own wrapper processes not counted). */
  processes: number
  /** CPU time (user + system) the tree has used, in ms; null when it cannot be measured. */
  cpuMs: number | null
  /** True while a process of the terminal's foreground group is blocked waiting for terminal input; null when that cannot be told. */
  isWaitingForInput: boolean | null
}

/** The terminal a shell runs on: the process hands spawned on it, and the terminal's device path. */
export interface TerminalSide {
  pid: number
  pts: string | null
}

/** One process as /proc/PID/stat shows it. */
interface Proc {
  pid: number
  comm: string
  state: string
  ppid: number
  pgrp: number
  ttyNr: number
  tpgid: number
  /** utime + stime + cutime + cstime, in clock ticks. */
  ticks: number
}

/** Clock ticks per second in /proc/PID/stat (USER_HZ: 100 on every architecture Linux runs Node on). */
const USER_HZ = 100
/** hands' own programs that can stand between the terminal and the job: the helper (its relay) and bubblewrap. */
const WRAPPERS = new Set(['hands-confine', 'bwrap'])
/** ECHO and ICANON in termios c_lflag. */
const ECHO = 0o10
const ICANON = 0o2
/** Bound on reading a terminal's modes with stty. */
const STTY_MS = 1000

function readStat(pid: number): Proc | null {
  const text = readProcFile(`/proc/${pid}/stat`)?.toString('latin1')
  if (text === undefined) return null
  const close = text.lastIndexOf(')')
  // After the command name: 0 state, 1 ppid, 2 pgrp, 3 session, 4 tty_nr, 5 tpgid, 11–14 utime stime cutime cstime.
  const f = text.slice(close + 2).split(' ')
  return {
    pid,
    comm: text.slice(text.indexOf('(') + 1, close),
    state: f[0] as string,
    ppid: Number(f[1]),
    pgrp: Number(f[2]),
    ttyNr: Number(f[4]),
    tpgid: Number(f[5]),
    ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]),
  }
}

/** `usage_usec` of a cgroup's cpu.stat (every cgroup v2 group has it, with or without the cpu controller); null when unreadable. */
function cgroupUsage(cpuStat: string): number | null {
  const text = readProcFile(cpuStat)?.toString('latin1')
  const m = text === undefined ? null : /^usage_usec (\d+)$/m.exec(text)
  return m === null ? null : Number(m[1])
}

/**
 * True when the terminal is set for a password (echo off, line input on), read with `stty -g`
 * (its third field is c_lflag in hex); null when stty cannot tell.
 */
function isPasswordMode(pts: string): Promise<boolean | null> {
  return new Promise((resolve) => {
    execFile('stty', ['-g', '-F', pts], { timeout: STTY_MS, encoding: 'latin1' }, (err, stdout) => {
      const lflag = err === null ? Number.parseInt(stdout.split(':')[3] ?? '', 16) : Number.NaN
      resolve(Number.isNaN(lflag) ? null : (lflag & ECHO) === 0 && (lflag & ICANON) !== 0)
    })
  })
}

/**
 * Watches one background shell's process tree for shell_logs.
 *
 * CPU time comes from the job's cgroup (`cpu.stat`, which counts every process that ever ran in
 * it, exited ones included; a group is reused, so its usage when the job started is subtracted),
 * else from /proc: utime + stime of each live process plus its cutime + cstime, the time of the
 * children it waited for; the helper's relay counts too, with the orphans it reaped as the
 * tree's subreaper. That misses a process that exited and was reaped from outside the tree (by
 * init, where no relay runs).
 *
 * Waiting for input: the terminal's foreground process group (tpgid) is looked up from the
 * process on the terminal, and each of its sleeping processes is asked what it is blocked on
 * (see terminal-wait.ts). A process Linux does not let hands look into (a set-user-ID program
 * such as sudo, run by another user) counts as waiting when the terminal is set for a password.
 */
export class TreeWatch {
  readonly #tree: JobTree
  readonly #isWrapped: boolean
  readonly #cpuStat: string | null
  readonly #cpuBase: number

  /** Make it before the job starts, so the usage its cgroup had is the baseline. `isWrapped`: hands' helper, not bash, runs on the terminal. */
  constructor(tree: JobTree, isWrapped: boolean) {
    this.#tree = tree
    this.#isWrapped = isWrapped
    const cpuStat = tree.cgroupProcs === null ? null : join(dirname(tree.cgroupProcs), 'cpu.stat')
    const base = cpuStat === null ? null : cgroupUsage(cpuStat)
    this.#cpuStat = base === null ? null : cpuStat
    this.#cpuBase = base ?? 0
  }

  /**
   * The facts now, for the shell on `terminal`. `terminal` is null once the process on it has ended
   * (its pid may name another process by then): only the processes the tree left are counted.
   */
  async facts(terminal: TerminalSide | null): Promise<TreeFacts> {
    const pids = [...this.#tree.pids()]
    // The process on the terminal is hands' own unreaped child while the shell runs: it counts even
    // where the tree cannot see it (a set-user-ID program hides the marker in its environment).
    if (terminal !== null && !pids.includes(terminal.pid)) pids.push(terminal.pid)
    const procs: Proc[] = []
    for (const pid of pids) {
      const p = readStat(pid)
      if (p !== null && p.state !== 'Z' && p.state !== 'X') procs.push(p)
    }
    if (terminal === null) return { processes: procs.filter((p) => !(this.#isWrapped && WRAPPERS.has(p.comm))).length, cpuMs: null, isWaitingForInput: null }
    const wrappers = this.#wrappers(procs, terminal.pid)
    return {
      processes: procs.filter((p) => !wrappers.has(p.pid)).length,
      cpuMs: this.#cpuMs(procs),
      isWaitingForInput: await this.#isWaiting(procs, terminal),
    }
  }

  /**
   * Pids of hands' wrappers: the process on the terminal when it is the helper (its relay) or
   * bubblewrap, and down from it each helper or bubblewrap whose parent is one. (Without a relay
   * the helper execs the job, which is then no wrapper.)
   */
  #wrappers(procs: readonly Proc[], ptyPid: number): Set<number> {
    const out = new Set<number>()
    if (!this.#isWrapped) return out
    if (procs.some((p) => p.pid === ptyPid && WRAPPERS.has(p.comm))) out.add(ptyPid)
    for (let grew = out.size > 0; grew; ) {
      grew = false
      for (const p of procs) {
        if (!out.has(p.pid) && WRAPPERS.has(p.comm) && out.has(p.ppid)) {
          out.add(p.pid)
          grew = true
        }
      }
    }
    return out
  }

  #cpuMs(procs: readonly Proc[]): number | null {
    if (this.#cpuStat !== null) {
      const usage = cgroupUsage(this.#cpuStat)
      if (usage !== null) return Math.max(0, Math.round((usage - this.#cpuBase) / 1000))
    }
    let ticks = 0
    for (const p of procs) ticks += p.ticks
    return Number.isFinite(ticks) ? Math.round((ticks * 1000) / USER_HZ) : null
  }

  async #isWaiting(procs: readonly Proc[], terminal: TerminalSide): Promise<boolean | null> {
    const onTerminal = readStat(terminal.pid)
    if (onTerminal === null || onTerminal.ttyNr === 0 || onTerminal.tpgid <= 0) return null
    const { ttyNr, tpgid } = onTerminal
    let isUnknown = false
    for (const p of procs) {
      if (p.pgrp !== tpgid || p.state !== 'S') continue
      const waiting = isWaitingOnTerminal(p.pid, ttyNr)
      if (waiting === true) return true
      if (waiting === null) isUnknown = true
    }
    if (!isUnknown) return false
    // A process hidden from hands is asleep: a password prompt is the one kind the terminal shows.
    return terminal.pts !== null && (await isPasswordMode(terminal.pts)) === true ? true : null
  }
}
