import { assertInput, shellStop, type ShellStopInput, type ShellStopResult } from '@hands/contracts'
import type { Session } from '../runtime/session.ts'
import { lookupShell } from './lookup.ts'
import { joinNotes, survivorNote } from './notes.ts'

function count(n: number): string {
  return `${n} ${n === 1 ? 'process' : 'processes'}`
}

/** shell_stop: SIGTERM, grace, SIGKILL, confirm the whole tree is gone; the id and its output are dropped. */
export async function shellStopTool(session: Session, raw: ShellStopInput): Promise<ShellStopResult> {
  session.assertOpen()
  const input = assertInput(shellStop, raw)
  const shell = lookupShell(session, input.id)
  session.shells.delete(shell.id)
  const wasRunning = shell.status === 'running'
  const report = await shell.stop(session.options.stopGraceMs)
  // The tree is gone: every path it named is in the record.
  const changes = shell.changes.total()
  shell.changes.dispose()
  session.gone.recordLog(shell.logPath, shell.id)
  session.changed()
  let what: string | null
  if (report.foundCount === 0) what = wasRunning ? 'Stopped; its process tree was already empty.' : null
  else if (!report.forced) what = `Stopped ${count(report.foundCount)} with SIGTERM.`
  else what = `Stopped ${count(report.foundCount)}; some ignored SIGTERM and were killed with SIGKILL after the ${session.options.stopGraceMs} ms grace.`
  const exited = wasRunning ? null : `It had already exited with ${shell.exit}${report.foundCount > 0 ? '; the processes it left running were stopped' : ''}.`
  return {
    id: shell.id,
    status: shell.status,
    exit: shell.exit,
    changes,
    note: joinNotes([exited, wasRunning ? what : null, survivorNote(report.survivors)]),
  }
}
