import { dirname, join, resolve } from 'node:path'
import ts from 'typescript'

const PACKAGE = join(import.meta.dirname, '..', '..')

/**
 * Type-check files with this package's tsconfig (the workspace's strict options and
 * `hands-source` resolution), as `tsc` would. `virtual` maps paths under the package to source
 * text served from memory; `aliases` maps a package name to the one its imports resolve to
 * (`openai` → `openai-v7`, subpaths too). Resolves to one line per diagnostic, empty when the files compile.
 */
export function typecheck(files: readonly string[], virtual: Readonly<Record<string, string>> = {}, aliases: Readonly<Record<string, string>> = {}): string[] {
  const configPath = join(PACKAGE, 'tsconfig.json')
  const config = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'))
      },
    },
  )
  if (config === undefined) throw new Error(`cannot read ${configPath}`)
  const memory = new Map(Object.entries(virtual).map(([p, text]) => [resolve(PACKAGE, p), text]))
  const host = ts.createCompilerHost(config.options)
  const { fileExists, readFile, getSourceFile } = host
  host.fileExists = (f) => memory.has(resolve(f)) || fileExists(f)
  host.readFile = (f) => memory.get(resolve(f)) ?? readFile(f)
  host.getSourceFile = (f, language, onError, isNew) => {
    const text = memory.get(resolve(f))
    return text === undefined ? getSourceFile(f, language, onError, isNew) : ts.createSourceFile(f, text, language)
  }
  const aliased = (name: string) => {
    const [pkg, ...rest] = name.split('/')
    const to = pkg === undefined ? undefined : aliases[pkg]
    return to === undefined || name.startsWith('@') ? name : [to, ...rest].join('/')
  }
  if (Object.keys(aliases).length > 0) {
    host.resolveModuleNameLiterals = (literals, containingFile, redirected, options, sourceFile) =>
      literals.map((literal) =>
        ts.resolveModuleName(
          aliased(literal.text),
          containingFile,
          options,
          host,
          undefined,
          redirected,
          ts.getModeForUsageLocation(sourceFile, literal, options),
        ),
      )
  }
  host.directoryExists = (d) => [...memory.keys()].some((p) => p.startsWith(`${resolve(d)}/`)) || ts.sys.directoryExists(d)
  const roots = [...files.map((f) => resolve(PACKAGE, f)), ...memory.keys()]
  const program = ts.createProgram({ rootNames: roots, options: config.options, host })
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file ? `${d.file.fileName.replace(`${dirname(PACKAGE)}/`, '')}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}` : '(global)'
    return `${where}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`
  })
}
