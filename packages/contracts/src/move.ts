import type { Static } from 'typebox'
import { defineTool } from './descriptor.ts'
import { MOVE, P } from './names.ts'
import { SrcDestInput, SrcDestResult } from './schema-parts.ts'

// input
export const MoveInput = SrcDestInput('File, symlink or directory to move.')
export type MoveInput = Static<typeof MoveInput>

// result
export const MoveResult = SrcDestResult()
export type MoveResult = Static<typeof MoveResult>

// errors: invalid_input, outside_roots, access_denied, not_found, destination_exists, into_itself,
// protected_path, not_confirmed, io_error

// descriptor
export const move = defineTool({
  name: MOVE,
  title: 'Move a path',
  describe: () => `Move or rename \`${P.src}\` to \`${P.dest}\`, across filesystems too; an existing \`${P.dest}\` is refused unless \`${P.is_overwrite}\`.`,
  input: MoveInput,
  result: MoveResult,
  call: [P.src, P.dest],
  effect: 'mutate',
  destroysWhen: P.is_overwrite,
  toggle: null,
})
