import type { Static } from 'typebox'
import { defineTool } from './descriptor.ts'
import { CREATE_DIRECTORY, P } from './names.ts'
import { PathsInput, PathsResult } from './schema-parts.ts'

// input
export const CreateDirectoryInput = PathsInput()
export type CreateDirectoryInput = Static<typeof CreateDirectoryInput>

// result
export const CreateDirectoryResult = PathsResult(P.is_created, 'False when the directory already existed.')
export type CreateDirectoryResult = Static<typeof CreateDirectoryResult>

// errors: invalid_input, outside_roots, access_denied, not_a_directory, io_error

// descriptor
export const createDirectory = defineTool({
  name: CREATE_DIRECTORY,
  title: 'Create directories',
  describe: () => `Create each of \`${P.paths}\` with any missing parents; an existing directory gives \`${P.is_created}\` false.`,
  input: CreateDirectoryInput,
  result: CreateDirectoryResult,
  call: [P.paths],
  effect: 'mutate',
  toggle: null,
})
