import { SHELL_LOGS, SHELL_STOP, type ToolError } from '@hands/contracts'
import { refuse } from '../errors.ts'
import type { Session } from '../runtime/session.ts'
import type { BackgroundShell } from '../shells/background-shell.ts'
import { listIds } from './lookup.ts'
import { bytesText } from '../limits/limits.ts'

/** The refusal of one more background shell than the session may hold. */
export function tooManyShells(session: Session): ToolError {
  const max = session.options.maxShells
  return refuse(
    'limit_reached',
    `This session already holds ${max} background ${max === 1 ? 'shell' : 'shells'}, the host's limit; nothing was started.`,
    `Stop one with ${SHELL_STOP} (an exited shell keeps its output until it is stopped). ${listIds(session)}`,
  )
}

/** The refusal of typed text that would pass the shell's input queue. */
export function inputQueueFull(shell: BackgroundShell, bytes: number, max: number): ToolError {
  const pending = shell.pendingInputBytes
  return refuse(
    'limit_reached',
    `Shell \`${shell.id}\` has not read ${pending} bytes typed earlier; ${bytes} more would pass the host's ${bytesText(max)} input queue, so nothing was written.`,
    pending > 0
      ? `The program is not reading its input: look at it with ${SHELL_LOGS}, type again once it reads, or stop it with ${SHELL_STOP}.`
      : `Type at most ${bytesText(max)} at once, or pass large input through a file.`,
  )
}
