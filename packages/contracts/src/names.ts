/** Tool names: the only spelling of each verb. Prose interpolates these, never a literal. */
export const SHELL_RUN = 'shell_run'
export const SHELL_BACKGROUND = 'shell_background'
export const SHELL_LOGS = 'shell_logs'
export const SHELL_TYPE = 'shell_type'
export const SHELL_STOP = 'shell_stop'
export const COPY = 'copy'
export const MOVE = 'move'
export const DELETE = 'delete'
export const CREATE_DIRECTORY = 'create_directory'
export const FILE_EXISTS = 'file_exists'

/** The ten tool names in SPEC §2 order. */
export const TOOL_NAMES = [SHELL_RUN, SHELL_BACKGROUND, SHELL_LOGS, SHELL_TYPE, SHELL_STOP, COPY, MOVE, DELETE, CREATE_DIRECTORY, FILE_EXISTS] as const

export type ToolName = (typeof TOOL_NAMES)[number]

/** Input property names shared by prose and schemas. */
export const P = {
  commands: 'commands',
  cwd: 'cwd',
  id: 'id',
  n: 'n',
  text: 'text',
  is_enter: 'is_enter',
  src: 'src',
  dest: 'dest',
  is_overwrite: 'is_overwrite',
  paths: 'paths',
  stdout: 'stdout',
  dropped_lines: 'dropped_lines',
  silent_ms: 'silent_ms',
  cpu_ms: 'cpu_ms',
  process_count: 'process_count',
  is_waiting_for_input: 'is_waiting_for_input',
  changes: 'changes',
  is_deleted: 'is_deleted',
  is_created: 'is_created',
  is_exists: 'is_exists',
} as const

/** Limits that appear in schemas and prose. */
export const LIMITS = {
  /** Default number of tail lines shell_logs returns. */
  logsDefault: 200,
  /** Most tail lines one shell_logs call may return. */
  logsMax: 2000,
  /** Paths of each kind an account of changes names (the rest are counted). */
  changesListed: 10,
} as const

/** What starts a shell_logs line whose beginning already left the history (only the oldest line returned can be cut). */
export const CUT_LINE_MARK = '[… start of line cut …] '

/** The host toggle that gates all five shell tools at once. */
export const SHELL_TOGGLE = 'shell'

/** The default name of the harness's code tool, where the model writes loops. */
export const CODE_TOOL = 'python_execution'
