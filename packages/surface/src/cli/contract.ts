import { parseArgs } from 'node:util'
import { DIFF_FORMATS, SurfaceLoadError, diffSurfaces, formatDiff, loadSurface, ownSurface, type DiffFormat } from '../contract/index.ts'
import { UsageError } from './args.ts'

export const CONTRACT_HELP = `usage: hands contract diff A [B] [--format text|md|json] [--exit-code]

Print every change a model or client would see between two hands contract surfaces: per tool the
name, title, description, each input and result schema keyword (path and old → new), annotations,
effect, toggle and call order; the error codes; the prompt prose line by line; and the token
delta per tool and in total.

A and B are each one of:
  a surface file        surface.json (from @hands/contracts, or generated/surface.json)
  a directory           an @hands/contracts package, a project with node_modules/@hands/contracts,
                        or a hands checkout
  a tarball             a packed @hands/contracts (.tgz)
  an npm spec           1.2.0, ^1.2, next (meaning @hands/contracts at that version), or any spec
                        npm pack takes (@hands/contracts@1.2.0, file:…)
B defaults to the @hands/contracts this hands was installed with.

  --format F            text (default, for a terminal), md (a Markdown block for a pull-request
                        comment) or json
  --exit-code           exit 1 when the surfaces differ, 0 when they do not (like git diff --exit-code)
  -h, --help            this help

Exit status: 0, or 1 with --exit-code and a difference; 2 when a side cannot be read.`

/** Where the command prints: results, and why a side could not be read. */
export interface ContractIo {
  out: (text: string) => void
  err: (text: string) => void
}

const STDIO: ContractIo = { out: (t) => void process.stdout.write(t), err: (t) => void process.stderr.write(t) }

/** `hands contract diff A [B]`, paths relative to `cwd`; returns the exit code. */
export function contract(argv: string[], io: ContractIo = STDIO, cwd: string = process.cwd()): number {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      options: { format: { type: 'string' }, 'exit-code': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    })
  } catch (e) {
    throw new UsageError((e as Error).message)
  }
  const { values, positionals } = parsed
  if (values.help) {
    io.out(`${CONTRACT_HELP}\n`)
    return 0
  }
  const [verb, a, b, ...rest] = positionals
  if (verb !== 'diff')
    throw new UsageError(
      `contract takes the subcommand diff, got ${verb === undefined ? 'nothing' : JSON.stringify(verb)}; e.g. hands contract diff 1.2.0 1.3.0`,
    )
  if (a === undefined || rest.length > 0)
    throw new UsageError('contract diff takes A and optionally B, e.g. hands contract diff node_modules/@hands/contracts 1.3.0')
  const format = values.format ?? 'text'
  if (!(DIFF_FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format takes ${DIFF_FORMATS.join(', ')}, got ${JSON.stringify(format)}`)
  let before, after
  try {
    before = loadSurface(a, cwd)
    after = b === undefined ? ownSurface() : loadSurface(b, cwd)
  } catch (e) {
    if (!(e instanceof SurfaceLoadError)) throw e
    io.err(`hands: ${e.message}\n`)
    return 2
  }
  const diff = diffSurfaces(before.surface, after.surface)
  io.out(`${formatDiff(diff, format as DiffFormat, { before: before.label, after: after.label })}\n`)
  return values['exit-code'] === true && diff.isChanged ? 1 : 0
}
