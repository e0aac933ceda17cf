export {
  createSurface,
  enabledContracts,
  enabledTools,
  shareLoginEnvironment,
  type CallOptions,
  type RootsChange,
  type Session,
  type SurfaceOptions,
} from './session.ts'
export { failure, type CallOutcome } from './outcome.ts'
// The contract types a consumer writes against, so an app needs no second install for them.
export type {
  Effect,
  ErrorCode,
  ErrorEnvelope,
  PromptProse,
  ToolAnnotations,
  ToolDescriptor,
  ToolInput,
  ToolName,
  ToolResult,
} from '@hands/contracts'
export type { AfterCallHook, BeforeCallHook, CallInfo, ConfirmDecline, ConfirmHook, ConfirmRequest, ConfirmTarget } from './hooks.ts'
export type { PathAccess, PathGate } from '@hands/fs-runtime'
export type { LoginEnvironment, ShellResource } from '@hands/shell-runtime'
export { renderError, renderResult, type RenderOptions } from './render/text.ts'
export { API_FORMATS, TOKEN_ENCODING, modelView, textCost, toApiTools, toolCost, type ApiFormat } from './adapters/index.ts'
export { RESOURCE_NOT_FOUND, SHELLS_URI, SHELL_URI_TEMPLATE, createMcpServer, type HandsMcpServer, type McpServerOptions } from './mcp/server.ts'
export { CODE_TOOL_ARGUMENT, ROUTING_PROMPT } from './mcp/prompts.ts'
export { serveStdio } from './mcp/stdio.ts'
export {
  DEFAULT_EVICT_IDLE_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_IDLE_MS,
  MCP_PATH,
  isLoopback,
  parseListen,
  serveHttp,
  type HttpServeOptions,
  type RunningHttpServer,
} from './mcp/http.ts'
