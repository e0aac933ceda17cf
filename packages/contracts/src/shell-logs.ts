import Type, { type Static } from 'typebox'
import { defineTool } from './descriptor.ts'
import { P, SHELL_LOGS } from './names.ts'
import { Exact, ExitCode, ShellId, Status, TailLines } from './schema-parts.ts'

// input
export const ShellLogsInput = Type.Object(
  {
    [P.id]: ShellId(),
    [P.n]: Type.Optional(TailLines()),
  },
  { additionalProperties: false },
)
export type ShellLogsInput = Static<typeof ShellLogsInput>

// result
export const ShellLogsResult = Exact({
  id: Type.String(),
  lines: Type.Array(Type.String(), {
    description: 'The last lines, oldest first, as its terminal shows them: rows that scrolled off, then the screen.',
  }),
  dropped_lines: Type.Integer({
    minimum: 0,
    description: 'Terminal rows that left the history since the previous read without being returned.',
  }),
  is_screen: Type.Boolean({
    description: 'A full-screen program holds the terminal: lines are its screen rows, top to bottom, redrawn in place.',
  }),
  status: Status(),
  exit: ExitCode(),
})
export type ShellLogsResult = Static<typeof ShellLogsResult>

// errors: invalid_input, unknown_id

// descriptor
export const shellLogs = defineTool({
  name: SHELL_LOGS,
  title: 'Read background shell output',
  describe: () =>
    `Return the last \`${P.n}\` lines a background shell printed, with its status and exit, at once; ` +
    `\`${P.dropped_lines}\` counts lines that scrolled away unseen since your previous read.`,
  input: ShellLogsInput,
  result: ShellLogsResult,
  call: [P.id],
  effect: 'read',
  toggle: 'shell',
})
