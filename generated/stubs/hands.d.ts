// Generated from packages/contracts by `pnpm gen` (tools/codegen). Do not edit by hand.

/** The hands tools as a JavaScript code sandbox binds them: await each call. */

export interface ShellRunCommand {
  command: string
  stdout: string
  stderr: string
  exit: number | null
  duration_ms: number
  timed_out: boolean
  changes: ShellRunCommandChanges
  note: string | null
}

export interface ShellRunResult {
  cwd: string
  commands: ShellRunCommand[]
  exit: number | null
  duration_ms: number
  timed_out: boolean
}

export interface ShellBackgroundResult {
  id: string
  cwd: string
  commands: string[]
  pid: number
  status: "running" | "exited" | "stopped"
  note: string | null
  is_already_running: boolean
}

export interface ShellLogsChanges {
  created: string[]
  modified: string[]
  deleted: string[]
  renamed: ShellLogsChangesRenamed[]
  counts: ShellLogsChangesCounts
  outside_roots: number
  is_complete: boolean
  note: string | null
}

export interface ShellLogsResult {
  id: string
  lines: string[]
  dropped_lines: number
  is_screen: boolean
  status: "running" | "exited" | "stopped"
  exit: number | null
  silent_ms: number | null
  cpu_ms: number | null
  process_count: number
  is_waiting_for_input: boolean | null
  changes: ShellLogsChanges
}

export interface ShellTypeResult {
  id: string
  text: string
  is_enter: boolean
  status: "running" | "exited" | "stopped"
}

export interface ShellStopChanges {
  created: string[]
  modified: string[]
  deleted: string[]
  renamed: ShellStopChangesRenamed[]
  counts: ShellStopChangesCounts
  outside_roots: number
  is_complete: boolean
  note: string | null
}

export interface ShellStopResult {
  id: string
  status: "running" | "exited" | "stopped"
  exit: number | null
  changes: ShellStopChanges
  note: string | null
}

export interface CopyResult {
  src: string
  dest: string
}

export interface MoveResult {
  src: string
  dest: string
}

export interface DeletePath {
  path: string
  is_deleted: boolean
}

export interface DeleteResult {
  paths: DeletePath[]
}

export interface CreateDirectoryPath {
  path: string
  is_created: boolean
}

export interface CreateDirectoryResult {
  paths: CreateDirectoryPath[]
}

export interface FileExistsPath {
  path: string
  is_exists: boolean
}

export interface FileExistsResult {
  paths: FileExistsPath[]
}

export interface ErrorEnvelope {
  tool: string
  code: "invalid_input" | "unknown_tool" | "disabled" | "refused" | "outside_roots" | "access_denied" | "not_found" | "not_a_directory" | "destination_exists" | "into_itself" | "protected_path" | "not_confirmed" | "unknown_id" | "not_running" | "limit_reached" | "spawn_failed" | "pty_unavailable" | "sandbox_unavailable" | "io_error" | "internal"
  message: string
  hint: string
  is_preflight: boolean
}

export interface Hands {
  /** Run `commands` as bash lines in order, each with its own exit, stdout, stderr and what it changed on disk; a failing line does not stop the rest. Long or interactive work goes to shell_background. Drive it from python_execution: batch the commands, read r["commands"][i]["stdout"], print only what you need. */
  shell_run(commands: string[], cwd?: string): Promise<ShellRunResult>

  /** Start `commands` as one bash script in a terminal and return its `id` at once; the same script while live returns that shell. Then poll shell_logs in python_execution. */
  shell_background(commands: string[], id?: string, cwd?: string): Promise<ShellBackgroundResult>

  /** Return a background shell's last `n` lines, status and exit, at once; since your previous read, `dropped_lines` counts lines scrolled away unseen and `changes` what it changed on disk; `silent_ms`, `cpu_ms`, `process_count` and `is_waiting_for_input` say whether a quiet shell is working or waiting for you. */
  shell_logs(id: string, n?: number): Promise<ShellLogsResult>

  /** Type `text` into a running background shell's terminal, then Enter unless `is_enter` is false. */
  shell_type(id: string, text: string, is_enter?: boolean): Promise<ShellTypeResult>

  /** Kill a background shell's whole process tree and forget its `id` and output. */
  shell_stop(id: string): Promise<ShellStopResult>

  /** Copy a file, symlink or directory tree from `src` to `dest`; an existing `dest` is refused unless `is_overwrite`. */
  copy(src: string, dest: string, is_overwrite?: boolean): Promise<CopyResult>

  /** Move or rename `src` to `dest`, across filesystems too; an existing `dest` is refused unless `is_overwrite`. */
  move(src: string, dest: string, is_overwrite?: boolean): Promise<MoveResult>

  /** Delete each of `paths`, directories with their contents; a path already missing gives `is_deleted` false. */
  delete(paths: string[]): Promise<DeleteResult>

  /** Create each of `paths` with any missing parents; an existing directory gives `is_created` false. */
  create_directory(paths: string[]): Promise<CreateDirectoryResult>

  /** Report whether each of `paths` exists, without reading it; a symlink counts as itself. */
  file_exists(paths: string[]): Promise<FileExistsResult>
}

export declare const hands: Hands

export declare const shell_run: Hands['shell_run']
export declare const shell_background: Hands['shell_background']
export declare const shell_logs: Hands['shell_logs']
export declare const shell_type: Hands['shell_type']
export declare const shell_stop: Hands['shell_stop']
export declare const copy: Hands['copy']
export declare const move: Hands['move']
declare const _delete: Hands['delete']
export { _delete as delete }
export declare const create_directory: Hands['create_directory']
export declare const file_exists: Hands['file_exists']
