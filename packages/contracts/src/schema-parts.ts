import Type, { type Static } from 'typebox'
import { LIMITS, P } from './names.ts'

/** Parts several tool schemas share, so one rule has one definition. */

export const NonEmptyString = (description?: string) => Type.String(description === undefined ? { minLength: 1 } : { minLength: 1, description })

export const Commands = (description: string) => Type.Array(Type.String({ minLength: 1 }), { minItems: 1, description })

export const Cwd = () => Type.String({ description: 'Directory under an allowed root; default the workspace root.' })

export const Paths = () =>
  Type.Array(Type.String({ minLength: 1 }), {
    minItems: 1,
    description: 'Relative to the workspace root, or absolute under an allowed root.',
  })

export const IsOverwrite = () => Type.Boolean({ default: false, description: `Replace an existing \`${P.dest}\`.` })

export const ShellId = () => NonEmptyString('Background shell handle.')

export const Status = () => Type.Enum(['running', 'exited', 'stopped'])

export const ExitCode = () =>
  Type.Union([Type.Integer(), Type.Null()], {
    description: 'Exit code; 128+N after signal N; null while running or never started.',
  })

export const Note = () => Type.Union([Type.String(), Type.Null()], { description: 'What the model needs to know, or null.' })

export const TailLines = () =>
  Type.Integer({
    minimum: 1,
    maximum: LIMITS.logsMax,
    default: LIMITS.logsDefault,
    description: 'Lines to return from the end.',
  })

/** An object schema whose every key is required and no other key is allowed. */
export const Exact = <T extends Parameters<typeof Type.Object>[0]>(properties: T) => Type.Object(properties, { additionalProperties: false })

const Count = () => Type.Integer({ minimum: 0 })
const Listed = (what: string) =>
  Type.Array(Type.String(), {
    description: `${what} (the first ${LIMITS.changesListed}; relative to the workspace; a directory ends in /, and what it holds is counted, not named).`,
  })

/** What a command, or a background shell, changed on disk under the roots. */
export const Changes = (description: string) =>
  Type.Object(
    {
      created: Listed('Paths made'),
      modified: Listed('Paths whose content or entry changed'),
      deleted: Listed('Paths removed'),
      renamed: Type.Array(Exact({ from: Type.String(), to: Type.String() }), { description: `Entries moved (the first ${LIMITS.changesListed}).` }),
      counts: Exact({ created: Count(), modified: Count(), deleted: Count(), renamed: Count() }),
      outside_roots: Type.Integer({ minimum: 0, description: 'Changes outside the roots: counted, not named.' }),
      is_complete: Type.Boolean({ description: 'Every change was seen; when false, note says what was not.' }),
      note: Note(),
    },
    { additionalProperties: false, description },
  )
export type Changes = Static<ReturnType<typeof Changes>>

/** The input of copy and move: two named paths and the overwrite switch. */
export const SrcDestInput = (srcDescription: string) =>
  Type.Object(
    {
      [P.src]: NonEmptyString(srcDescription),
      [P.dest]: NonEmptyString('New path; missing parent directories are created.'),
      [P.is_overwrite]: Type.Optional(IsOverwrite()),
    },
    { additionalProperties: false },
  )

/** The result of copy and move: both paths as given. */
export const SrcDestResult = () =>
  Exact({
    src: Type.String({ description: 'As given.' }),
    dest: Type.String({ description: 'As given.' }),
  })

/** The input of the three batch tools. */
export const PathsInput = () => Type.Object({ [P.paths]: Paths() }, { additionalProperties: false })

/** The result of a batch tool: one entry per input path, in input order, with one boolean. */
export const PathsResult = <K extends string>(flag: K, description: string) =>
  Exact({
    paths: Type.Array(
      Exact({ path: Type.String({ description: 'As given.' }), [flag]: Type.Boolean({ description }) } as {
        path: ReturnType<typeof Type.String>
      } & Record<K, ReturnType<typeof Type.Boolean>>),
      { description: 'One entry per input path, in input order.' },
    ),
  })
