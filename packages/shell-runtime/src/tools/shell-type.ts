import { assertInput, SHELL_LOGS, SHELL_BACKGROUND, shellType, type ShellTypeInput, type ShellTypeResult } from '@hands/contracts'
import { refuse } from '../errors.ts'
import { inputQueueFull } from './refusals.ts'
import type { Session } from '../runtime/session.ts'
import { lookupShell } from './lookup.ts'

/** shell_type: keystrokes into a running shell's terminal, Enter (`\r`) unless `is_enter` is false. */
export async function shellTypeTool(session: Session, raw: ShellTypeInput): Promise<ShellTypeResult> {
  session.assertOpen()
  const input = assertInput(shellType, raw)
  const shell = lookupShell(session, input.id)
  if (shell.status !== 'running') {
    throw refuse(
      'not_running',
      `Shell \`${shell.id}\` has ${shell.status === 'stopped' ? 'been stopped' : `exited with ${shell.exit}`}, so it takes no input.`,
      `Read what it printed with ${SHELL_LOGS}, or start it again with ${SHELL_BACKGROUND}.`,
    )
  }
  const isEnter = input.is_enter ?? true
  const keys = isEnter ? `${input.text}\r` : input.text
  if (!shell.type(keys)) throw inputQueueFull(shell, Buffer.byteLength(keys), session.options.typeQueueBytes)
  return { id: shell.id, text: input.text, is_enter: isEnter, status: shell.status }
}
