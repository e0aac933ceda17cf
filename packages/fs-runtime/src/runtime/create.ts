import type {
  CopyInput,
  CopyResult,
  CreateDirectoryInput,
  CreateDirectoryResult,
  DeleteInput,
  DeleteResult,
  FileExistsInput,
  FileExistsResult,
  MoveInput,
  MoveResult,
} from '@hands/contracts'
import { helperPath } from '@hands/sandbox'
import type { PathGate } from '../confine/gate.ts'
import { realRootsSync } from '../confine/roots.ts'
import { copyPath } from '../tools/copy.ts'
import { createDirectory } from '../tools/create-directory.ts'
import { deletePaths } from '../tools/delete.ts'
import { fileExists } from '../tools/file-exists.ts'
import { movePath } from '../tools/move.ts'
import type { ConfirmHook, Context } from './context.ts'

/** How a host sets up the filesystem tools. */
export interface FsRuntimeOptions {
  /** Allowed roots; the first is the workspace root. Each must exist; each is resolved with realpath once. */
  roots: string[]
  /** Host access gates, consulted for every path a tool names and every entry of a tree it copies, moves or deletes. */
  gates?: readonly PathGate[]
  /** Consulted before a delete, and before a copy or move replaces an existing dest; may decline. */
  confirm?: ConfirmHook
  /**
   * The hands native helper, `hands-confine` of @hands/sandbox: large trees are copied and removed
   * through it, with *at calls on descriptors, at about cp's and rm's cost per entry. Default: the
   * one @hands/sandbox carries (`helperPath()`); null, or where it is not built, the worker-thread
   * walk does the same work.
   */
  helper?: string | null
}

/** The five filesystem tools, one method per tool, named as the tool. */
export interface FsRuntime {
  copy(input: CopyInput): Promise<CopyResult>
  move(input: MoveInput): Promise<MoveResult>
  delete(input: DeleteInput): Promise<DeleteResult>
  create_directory(input: CreateDirectoryInput): Promise<CreateDirectoryResult>
  file_exists(input: FileExistsInput): Promise<FileExistsResult>
  /** The real absolute roots, the workspace root first. */
  readonly roots: readonly string[]
}

/**
 * Create the filesystem runtime. Throws a TypeError when a root is missing or not a directory.
 * Each method resolves to the contract's result or rejects with a ToolError.
 */
export function createFsRuntime(options: FsRuntimeOptions): FsRuntime {
  const roots = Object.freeze(realRootsSync(options.roots))
  const ctx: Context = { roots, gates: options.gates, confirm: options.confirm, helper: options.helper === undefined ? helperPath() : options.helper }
  return {
    roots,
    copy: (input) => copyPath(ctx, input),
    move: (input) => movePath(ctx, input),
    delete: (input) => deletePaths(ctx, input),
    create_directory: (input) => createDirectory(ctx, input),
    file_exists: (input) => fileExists(ctx, input),
  }
}
