import type { Static } from 'typebox'
import { defineTool } from './descriptor.ts'
import { FILE_EXISTS, P } from './names.ts'
import { PathsInput, PathsResult } from './schema-parts.ts'

// input
export const FileExistsInput = PathsInput()
export type FileExistsInput = Static<typeof FileExistsInput>

// result
export const FileExistsResult = PathsResult(P.is_exists, 'True when the path exists; a symlink counts as itself.')
export type FileExistsResult = Static<typeof FileExistsResult>

// errors: invalid_input, outside_roots, access_denied

// descriptor
export const fileExists = defineTool({
  name: FILE_EXISTS,
  title: 'Check paths exist',
  describe: () => `Report whether each of \`${P.paths}\` exists, without reading it; a symlink counts as itself.`,
  input: FileExistsInput,
  result: FileExistsResult,
  call: [P.paths],
  effect: 'read',
  toggle: null,
})
