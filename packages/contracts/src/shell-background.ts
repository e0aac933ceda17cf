import Type, { type Static } from 'typebox'
import { defineTool } from './descriptor.ts'
import { P, SHELL_BACKGROUND, SHELL_LOGS } from './names.ts'
import { Commands, Cwd, Exact, NonEmptyString, Note, Status } from './schema-parts.ts'

// input
export const ShellBackgroundInput = Type.Object(
  {
    [P.commands]: Commands('Bash lines, run in order as one script.'),
    [P.id]: Type.Optional(NonEmptyString('Handle; derived from the program name when omitted.')),
    [P.cwd]: Type.Optional(Cwd()),
  },
  { additionalProperties: false },
)
export type ShellBackgroundInput = Static<typeof ShellBackgroundInput>

// result
export const ShellBackgroundResult = Exact({
  id: Type.String({ description: 'The handle for the other shell tools.' }),
  cwd: Type.String({ description: 'Absolute directory the script runs in.' }),
  commands: Type.Array(Type.String(), { description: 'The script lines of the shell behind this id.' }),
  pid: Type.Integer({ description: 'Process id of the shell.' }),
  status: Status(),
  note: Note(),
  is_already_running: Type.Boolean({ description: 'A live shell was returned and nothing was started.' }),
})
export type ShellBackgroundResult = Static<typeof ShellBackgroundResult>

// errors: invalid_input, outside_roots, access_denied, not_found, not_a_directory, limit_reached, spawn_failed, pty_unavailable, sandbox_unavailable

// descriptor
export const shellBackground = defineTool({
  name: SHELL_BACKGROUND,
  title: 'Start a background shell',
  describe: ({ codeTool }) =>
    `Start \`${P.commands}\` as one bash script in a terminal and return its \`${P.id}\` at once; the same script while live returns that shell. ` +
    (codeTool === null ? `Then poll ${SHELL_LOGS} for its output.` : `Then poll ${SHELL_LOGS} in ${codeTool}.`),
  input: ShellBackgroundInput,
  result: ShellBackgroundResult,
  call: [P.commands],
  effect: 'execute',
  toggle: 'shell',
})
