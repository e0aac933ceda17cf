export {
  SOURCE_LINE,
  buildSurface,
  plain,
  type Json,
  type Surface,
  type SurfaceErrorCode,
  type SurfaceNoCodeTool,
  type SurfacePrompt,
  type SurfaceTool,
} from './surface.ts'
export { RenderExampleError, renderExamples, type RenderExamples, type RenderedExample, type Rendering } from './rendering.ts'
export { RENDER_EXAMPLES, type ToolExamples } from './examples.ts'
export { diffSurfaces, type Change, type RenderingChange, type SurfaceDiff, type TokenDelta, type ToolDiff } from './diff.ts'
export { DIFF_FORMATS, formatDiff, wordDiff, type DiffFormat, type DiffLabels } from './format.ts'
export { CONTRACTS_PACKAGE, SURFACE_FILE, SurfaceLoadError, loadSurface, ownSurface, parseSurface, type LoadedSurface } from './load.ts'
