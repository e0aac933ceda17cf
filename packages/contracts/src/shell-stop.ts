import Type, { type Static } from 'typebox'
import { defineTool } from './descriptor.ts'
import { P, SHELL_STOP } from './names.ts'
import { Changes, Exact, ExitCode, Note, ShellId, Status } from './schema-parts.ts'

// input
export const ShellStopInput = Type.Object({ [P.id]: ShellId() }, { additionalProperties: false })
export type ShellStopInput = Static<typeof ShellStopInput>

// result
export const ShellStopResult = Exact({
  id: Type.String(),
  status: Status(),
  exit: ExitCode(),
  changes: Changes('What the shell, and everything it started, changed on disk since it started.'),
  note: Note(),
})
export type ShellStopResult = Static<typeof ShellStopResult>

// errors: invalid_input, unknown_id, sandbox_unavailable

// descriptor
export const shellStop = defineTool({
  name: SHELL_STOP,
  title: 'Stop a background shell',
  describe: () => `Kill a background shell's whole process tree and forget its \`${P.id}\` and output.`,
  input: ShellStopInput,
  result: ShellStopResult,
  call: [P.id],
  effect: 'mutate',
  toggle: 'shell',
})
