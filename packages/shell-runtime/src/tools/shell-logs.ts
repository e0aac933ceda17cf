import { assertInput, LIMITS, shellLogs, type ShellLogsInput, type ShellLogsResult } from '@hands/contracts'
import type { Session } from '../runtime/session.ts'
import { lookupShell } from './lookup.ts'

/** shell_logs: the last `n` lines of the terminal now (a full-screen program's screen rows), and how many rows scrolled away unseen since the previous read. */
export async function shellLogsTool(session: Session, raw: ShellLogsInput): Promise<ShellLogsResult> {
  session.assertOpen()
  const input = assertInput(shellLogs, raw)
  const shell = lookupShell(session, input.id)
  const { lines, dropped, isAlternate } = shell.logs(input.n ?? LIMITS.logsDefault)
  return { id: shell.id, lines, dropped_lines: dropped, is_screen: isAlternate, status: shell.status, exit: shell.exit }
}
