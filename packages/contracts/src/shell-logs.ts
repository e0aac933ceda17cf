import Type, { type Static } from 'typebox'
import { defineTool } from './descriptor.ts'
import { CUT_LINE_MARK, P, SHELL_LOGS } from './names.ts'
import { Changes, Exact, ExitCode, ShellId, Status, TailLines } from './schema-parts.ts'

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
    description: `The last lines, oldest first, as its terminal shows them: rows that scrolled off, then the screen; a long line is one line. A first line whose start left the history begins with \`${CUT_LINE_MARK.trim()}\`.`,
  }),
  dropped_lines: Type.Integer({
    minimum: 0,
    description: 'Lines that left the history since the previous read without being returned.',
  }),
  is_screen: Type.Boolean({
    description: 'A full-screen program holds the terminal: lines are its screen rows, top to bottom, redrawn in place.',
  }),
  status: Status(),
  exit: ExitCode(),
  silent_ms: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
    description: 'Milliseconds since its terminal last printed anything; null once exited.',
  }),
  cpu_ms: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
    description: 'CPU time its whole process tree has used, in ms; null once exited. Rising while silent: it is working.',
  }),
  process_count: Type.Integer({
    minimum: 0,
    description: 'Processes of its tree alive now; once exited, those it left running.',
  }),
  is_waiting_for_input: Type.Union([Type.Boolean(), Type.Null()], {
    description: 'True while it is blocked reading its terminal: a prompt or an editor waiting for keys. Null once exited or when this cannot be told.',
  }),
  changes: Changes('What the shell, and everything it started, changed on disk since your previous read of it (since it started, on the first read).'),
})
export type ShellLogsResult = Static<typeof ShellLogsResult>

// errors: invalid_input, unknown_id, sandbox_unavailable

// descriptor
export const shellLogs = defineTool({
  name: SHELL_LOGS,
  title: 'Read background shell output',
  describe: () =>
    `Return a background shell's last \`${P.n}\` lines, status and exit, at once; since your previous read, ` +
    `\`${P.dropped_lines}\` counts lines scrolled away unseen and \`${P.changes}\` what it changed on disk; ` +
    `\`${P.silent_ms}\`, \`${P.cpu_ms}\`, \`${P.process_count}\` and \`${P.is_waiting_for_input}\` say whether a quiet shell is working or waiting for you.`,
  input: ShellLogsInput,
  result: ShellLogsResult,
  call: [P.id],
  effect: 'read',
  toggle: 'shell',
})
