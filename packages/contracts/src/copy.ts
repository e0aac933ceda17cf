import type { Static } from 'typebox'
import { defineTool } from './descriptor.ts'
import { COPY, P } from './names.ts'
import { SrcDestInput, SrcDestResult } from './schema-parts.ts'

// input
export const CopyInput = SrcDestInput('File, symlink or directory to copy.')
export type CopyInput = Static<typeof CopyInput>

// result
export const CopyResult = SrcDestResult()
export type CopyResult = Static<typeof CopyResult>

// errors: invalid_input, outside_roots, access_denied, not_found, destination_exists, into_itself,
// protected_path, not_confirmed, io_error

// descriptor
export const copy = defineTool({
  name: COPY,
  title: 'Copy a path',
  describe: () =>
    `Copy a file, symlink or directory tree from \`${P.src}\` to \`${P.dest}\`; an existing \`${P.dest}\` is refused unless \`${P.is_overwrite}\`.`,
  input: CopyInput,
  result: CopyResult,
  call: [P.src, P.dest],
  effect: 'mutate',
  destroysWhen: P.is_overwrite,
  toggle: null,
})
