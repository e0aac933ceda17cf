export {
  CODE_TOOL,
  COPY,
  CREATE_DIRECTORY,
  CUT_LINE_MARK,
  DELETE,
  FILE_EXISTS,
  LIMITS,
  MOVE,
  P,
  SHELL_BACKGROUND,
  SHELL_LOGS,
  SHELL_RUN,
  SHELL_STOP,
  SHELL_TOGGLE,
  SHELL_TYPE,
  TOOL_NAMES,
  type ToolName,
} from './names.ts'
export { annotationsFor, effectTraits, type Effect, type EffectTraits, type ToolAnnotations } from './effect.ts'
export {
  ERROR_CODES,
  ERROR_CODE_LIST,
  ErrorEnvelope,
  isErrorCode,
  ToolError,
  isToolErrorLike,
  isToolName,
  toErrorEnvelope,
  type ErrorCode,
  type ToolErrorFields,
} from './errors.ts'
export {
  DEFAULT_PROSE,
  defineTool,
  describeTool,
  type ProseContext,
  type ToolContract,
  type ToolDescriptor,
} from './descriptor.ts'
export { ShellRunCommandResult, ShellRunInput, ShellRunResult, shellRun } from './shell-run.ts'
export type { Changes } from './schema-parts.ts'
export { ShellBackgroundInput, ShellBackgroundResult, shellBackground } from './shell-background.ts'
export { ShellLogsInput, ShellLogsResult, shellLogs } from './shell-logs.ts'
export { ShellTypeInput, ShellTypeResult, shellType } from './shell-type.ts'
export { ShellStopInput, ShellStopResult, shellStop } from './shell-stop.ts'
export { CopyInput, CopyResult, copy } from './copy.ts'
export { MoveInput, MoveResult, move } from './move.ts'
export { DeleteInput, DeleteResult, deleteTool } from './delete.ts'
export { CreateDirectoryInput, CreateDirectoryResult, createDirectory } from './create-directory.ts'
export { FileExistsInput, FileExistsResult, fileExists } from './file-exists.ts'
export {
  CONTRACTS,
  FS_CONTRACTS,
  SHELL_CONTRACTS,
  TOOLS,
  contractOf,
  describeTools,
  type ToolInput,
  type ToolResult,
} from './registry.ts'
export { promptMarkdown, renderPrompt, type PromptOptions, type PromptProse } from './prompt.ts'
export {
  assertInput,
  checkInput,
  checkResult,
  checkSchema,
  describeAllowed,
  explainIssues,
  type CheckOutcome,
  type InputIssue,
} from './validate.ts'
