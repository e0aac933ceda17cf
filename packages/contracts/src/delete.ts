import type { Static } from 'typebox'
import { defineTool } from './descriptor.ts'
import { DELETE, P } from './names.ts'
import { PathsInput, PathsResult } from './schema-parts.ts'

// input
export const DeleteInput = PathsInput()
export type DeleteInput = Static<typeof DeleteInput>

// result
export const DeleteResult = PathsResult(P.is_deleted, 'False when the path was already missing.')
export type DeleteResult = Static<typeof DeleteResult>

// errors: invalid_input, outside_roots, access_denied, protected_path, not_confirmed, io_error

// descriptor
export const deleteTool = defineTool({
  name: DELETE,
  title: 'Delete paths',
  describe: () => `Delete each of \`${P.paths}\`, directories with their contents; a path already missing gives \`${P.is_deleted}\` false.`,
  input: DeleteInput,
  result: DeleteResult,
  call: [P.paths],
  effect: 'destroy',
  toggle: null,
})
