import { SOURCE_LINE } from '@hands/surface/contract'

export { SOURCE_LINE }

export const hashHeader = () => `# ${SOURCE_LINE}\n`
export const slashHeader = () => `// ${SOURCE_LINE}\n`
export const htmlHeader = () => `<!-- ${SOURCE_LINE} -->\n`

/** LF line ends and exactly one trailing newline. */
export function finish(text: string): string {
  return `${text.replace(/\r\n/g, '\n').replace(/\n+$/, '')}\n`
}
