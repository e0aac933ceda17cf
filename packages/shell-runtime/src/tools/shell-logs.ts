import { assertInput, LIMITS, shellLogs, type ShellLogsInput, type ShellLogsResult } from '@hands/contracts'
import type { Session } from '../runtime/session.ts'
import { lookupShell } from './lookup.ts'

/**
 * shell_logs: the last `n` lines of the terminal now (a full-screen program's screen rows), how
 * many lines scrolled away unseen since the previous read, and how the shell is doing: silence,
 * CPU time, live processes, whether it waits for input; what it changed on disk since the previous read.
 */
export async function shellLogsTool(session: Session, raw: ShellLogsInput): Promise<ShellLogsResult> {
  session.assertOpen()
  const input = assertInput(shellLogs, raw)
  const shell = lookupShell(session, input.id)
  const live = await shell.liveness()
  const { lines, dropped, isAlternate } = shell.logs(input.n ?? LIMITS.logsDefault)
  // The shell may have ended while its tree was looked at: the result describes it as it is now.
  const isRunning = shell.status === 'running'
  return {
    id: shell.id,
    lines,
    dropped_lines: dropped,
    is_screen: isAlternate,
    status: shell.status,
    exit: shell.exit,
    silent_ms: isRunning ? live.silentMs : null,
    cpu_ms: isRunning ? live.cpuMs : null,
    process_count: live.processes,
    is_waiting_for_input: isRunning ? live.isWaitingForInput : null,
    changes: shell.changes.since(isRunning),
  }
}
