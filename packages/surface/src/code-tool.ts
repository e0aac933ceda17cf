/** How a host says it has no code tool where a name is asked for (`--code-tool none`, the MCP prompt's `code_tool`). */
export const NO_CODE_TOOL = 'none'

/** A code tool as a host spells it: `none` means the harness has none. */
export function parseCodeTool(text: string): string | null {
  return text === NO_CODE_TOOL ? null : text
}
