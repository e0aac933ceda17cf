/** The header every generated file starts with: its source and the command that regenerates it. */
export const SOURCE_LINE = 'Generated from packages/contracts by `pnpm gen` (tools/codegen). Do not edit by hand.'

export const hashHeader = () => `# ${SOURCE_LINE}\n`
export const slashHeader = () => `// ${SOURCE_LINE}\n`
export const htmlHeader = () => `<!-- ${SOURCE_LINE} -->\n`

/** LF line ends and exactly one trailing newline. */
export function finish(text: string): string {
  return `${text.replace(/\r\n/g, '\n').replace(/\n+$/, '')}\n`
}
