import { createRequire } from 'node:module'
import type { McpTool } from '../adapters/api-tools.ts'

/** Whether the manifest holds the descriptions these options give: the default code tool's, or none's. */
export function isStaticList(options: { codeTool?: string | null }): boolean {
  return options.codeTool === undefined || options.codeTool === null
}

/** One tool of the contracts' generated surface manifest (`@hands/contracts/surface.json`), as far as `tools/list` needs it. */
interface ManifestTool {
  name: string
  title: string
  description: string
  input_schema: McpTool['inputSchema']
  result_schema: McpTool['outputSchema']
  annotations: Omit<McpTool['annotations'], 'title'>
  /** The host toggle that switches the tool off, or null. */
  toggle: string | null
}

/**
 * The `tools/list` entries for these options, read from the surface manifest codegen writes into
 * the contracts package (descriptions with the default code tool, or without one for `codeTool:
 * null`): no TypeBox, no runtime, so the stdio server answers `tools/list` before its tools have
 * loaded. Null when the options name another code tool; the entries are then made from the
 * contracts once loaded. A test holds them equal to `toApiTools('mcp', enabledTools(options))`.
 */
export function staticMcpTools(options: { toggles?: { shell?: boolean }; codeTool?: string | null }): McpTool[] | null {
  if (!isStaticList(options)) return null
  const isShell = options.toggles?.shell ?? true
  const manifest = createRequire(import.meta.url)('@hands/contracts/surface.json') as {
    tools: ManifestTool[]
    no_code_tool: { descriptions: Record<string, string> }
  }
  const descriptions = options.codeTool === null ? manifest.no_code_tool.descriptions : {}
  return manifest.tools
    .filter((t) => t.toggle === null || isShell)
    .map((t) => ({
      name: t.name,
      title: t.title,
      description: descriptions[t.name] ?? t.description,
      inputSchema: t.input_schema,
      outputSchema: t.result_schema,
      annotations: { title: t.title, ...t.annotations },
    }))
}
