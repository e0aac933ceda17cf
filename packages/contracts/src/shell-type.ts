import Type, { type Static } from 'typebox'
import { defineTool } from './descriptor.ts'
import { P, SHELL_TYPE } from './names.ts'
import { Exact, ShellId, Status } from './schema-parts.ts'

// input
export const ShellTypeInput = Type.Object(
  {
    [P.id]: ShellId(),
    [P.text]: Type.String({ description: 'Keystrokes; may be empty.' }),
    [P.is_enter]: Type.Optional(Type.Boolean({ default: true, description: 'Press Enter after the text.' })),
  },
  { additionalProperties: false },
)
export type ShellTypeInput = Static<typeof ShellTypeInput>

// result
export const ShellTypeResult = Exact({
  id: Type.String(),
  text: Type.String({ description: 'The text as typed.' }),
  is_enter: Type.Boolean(),
  status: Status(),
})
export type ShellTypeResult = Static<typeof ShellTypeResult>

// errors: invalid_input, unknown_id, not_running, limit_reached, sandbox_unavailable

// descriptor
export const shellType = defineTool({
  name: SHELL_TYPE,
  title: 'Type into a background shell',
  describe: () => `Type \`${P.text}\` into a running background shell's terminal, then Enter unless \`${P.is_enter}\` is false.`,
  input: ShellTypeInput,
  result: ShellTypeResult,
  call: [P.id, P.text],
  effect: 'execute',
  toggle: 'shell',
})
