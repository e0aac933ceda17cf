import { createRequire } from 'node:module'
import type { McpTool } from '../adapters/api-tools.ts'

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
 * the contracts package (descriptions with the default code tool): no TypeBox, no runtime, so the
 * stdio server answers `tools/list` before its tools have loaded. Null when the options change
 * what the model reads (`codeTool`); the entries are then made from the contracts once loaded.
 * A test holds them equal to `toApiTools('mcp', enabledTools(options))`.
 */
export function staticMcpTools(options: { toggles?: { shell?: boolean }; codeTool?: string }): McpTool[] | null {
  if (options.codeTool !== undefined) return null
  const isShell = options.toggles?.shell ?? true
  const manifest = createRequire(import.meta.url)('@hands/contracts/surface.json') as { tools: ManifestTool[] }
  return manifest.tools
    .filter((t) => t.toggle === null || isShell)
    .map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.input_schema,
      outputSchema: t.result_schema,
      annotations: { title: t.title, ...t.annotations },
    }))
}
