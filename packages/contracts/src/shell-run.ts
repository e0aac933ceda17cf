import Type, { type Static } from 'typebox'
import { defineTool } from './descriptor.ts'
import { P, SHELL_BACKGROUND, SHELL_RUN } from './names.ts'
import { Changes, Commands, Cwd, Exact, ExitCode, Note } from './schema-parts.ts'

// input
export const ShellRunInput = Type.Object(
  {
    [P.commands]: Commands('Bash lines, run in order, each with its own result.'),
    [P.cwd]: Type.Optional(Cwd()),
  },
  { additionalProperties: false },
)
export type ShellRunInput = Static<typeof ShellRunInput>

// result
export const ShellRunCommandResult = Exact({
  command: Type.String({ description: 'The line as given.' }),
  stdout: Type.String({ description: 'Head and tail of stdout; an inline marker counts what was omitted.' }),
  stderr: Type.String({ description: 'Head and tail of stderr, bounded the same way.' }),
  exit: ExitCode(),
  duration_ms: Type.Integer({ minimum: 0 }),
  timed_out: Type.Boolean({ description: 'The host bound stopped this command.' }),
  changes: Changes('What this line, and everything it started, changed on disk.'),
  note: Note(),
})
export type ShellRunCommandResult = Static<typeof ShellRunCommandResult>

export const ShellRunResult = Exact({
  cwd: Type.String({ description: 'Absolute directory the commands ran in.' }),
  commands: Type.Array(ShellRunCommandResult, { description: 'One entry per input line, in input order.' }),
  exit: Type.Union([Type.Integer(), Type.Null()], {
    description: 'First non-zero exit, null when the bound stopped a command, else 0.',
  }),
  duration_ms: Type.Integer({ minimum: 0 }),
  timed_out: Type.Boolean(),
})
export type ShellRunResult = Static<typeof ShellRunResult>

// errors: invalid_input, outside_roots, access_denied, not_found, not_a_directory, spawn_failed, sandbox_unavailable

// descriptor
export const shellRun = defineTool({
  name: SHELL_RUN,
  title: 'Run shell commands',
  describe: ({ codeTool }) =>
    `Run \`${P.commands}\` as bash lines in order, each with its own exit, stdout, stderr and what it changed on disk; a failing line does not stop the rest. ` +
    `Long or interactive work goes to ${SHELL_BACKGROUND}. ` +
    (codeTool === null
      ? 'Batch related lines into one call, not one call each.'
      : `Drive it from ${codeTool}: batch the commands, read r["${P.commands}"][i]["${P.stdout}"], print only what you need.`),
  input: ShellRunInput,
  result: ShellRunResult,
  call: [P.commands],
  effect: 'execute',
  toggle: 'shell',
})
