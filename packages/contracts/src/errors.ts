import Type, { type Static } from 'typebox'
import { SHELL_BACKGROUND, SHELL_RUN, TOOL_NAMES } from './names.ts'

/**
 * The closed set of error codes. Each says what went wrong, whether a retry of the SAME call
 * can succeed (`is_retryable`), and whether it is always raised before anything ran.
 */
export const ERROR_CODES = {
  invalid_input: {
    summary: 'The input does not match the tool schema; the named property says what is allowed.',
    is_retryable: false,
    is_always_preflight: true,
  },
  unknown_tool: {
    summary: 'No tool of that name exists in this surface.',
    is_retryable: false,
    is_always_preflight: true,
  },
  disabled: {
    summary: 'The tool exists but the host has switched it off.',
    is_retryable: false,
    is_always_preflight: true,
  },
  refused: {
    summary: 'A host hook refused the call before it ran.',
    is_retryable: false,
    is_always_preflight: true,
  },
  outside_roots: {
    summary: 'A path resolves outside every allowed root (after following symlinks).',
    is_retryable: false,
    is_always_preflight: true,
  },
  access_denied: {
    summary: 'A host access gate hides or refuses the path.',
    is_retryable: false,
    is_always_preflight: true,
  },
  not_found: {
    summary: 'A path the call needs does not exist.',
    is_retryable: false,
    is_always_preflight: true,
  },
  not_a_directory: {
    summary: 'A path that must be a directory is something else.',
    is_retryable: false,
    is_always_preflight: true,
  },
  destination_exists: {
    summary: 'The destination exists and overwriting was not asked for.',
    is_retryable: false,
    is_always_preflight: true,
  },
  into_itself: {
    summary: 'A directory cannot be copied or moved into itself.',
    is_retryable: false,
    is_always_preflight: true,
  },
  protected_path: {
    summary: 'The path is an allowed root itself, which is never deleted or replaced.',
    is_retryable: false,
    is_always_preflight: true,
  },
  not_confirmed: {
    summary: 'The host confirmation hook declined a destructive call.',
    is_retryable: false,
    is_always_preflight: true,
  },
  unknown_id: {
    summary: 'No background shell has that id in this session.',
    is_retryable: false,
    is_always_preflight: true,
  },
  not_running: {
    summary: 'The background shell has exited, so it takes no input.',
    is_retryable: false,
    is_always_preflight: true,
  },
  limit_reached: {
    summary: 'A host limit is reached (background shells in this session, input a shell has not read yet); the hint says what frees room.',
    is_retryable: true,
    is_always_preflight: true,
  },
  spawn_failed: {
    summary: 'The operating system could not start the process; a retry may succeed once resources free up.',
    is_retryable: true,
    is_always_preflight: true,
  },
  pty_unavailable: {
    summary: `The host cannot open a terminal (node-pty did not load), so ${SHELL_BACKGROUND} cannot start a shell; ${SHELL_RUN} still works.`,
    is_retryable: false,
    is_always_preflight: true,
  },
  sandbox_unavailable: {
    summary:
      'No sandbox can confine commands on this host and the host has not chosen to run them unconfined, so no shell tool runs; the message names what is missing, the likely cause and the fix.',
    is_retryable: false,
    is_always_preflight: true,
  },
  io_error: {
    summary: 'The filesystem failed part way; the message says what was and was not done.',
    is_retryable: true,
    is_always_preflight: false,
  },
  internal: {
    summary: 'A bug in hands; the message carries the detail.',
    is_retryable: false,
    is_always_preflight: false,
  },
} as const satisfies Record<string, { summary: string; is_retryable: boolean; is_always_preflight: boolean }>

export type ErrorCode = keyof typeof ERROR_CODES

/** Error codes in declaration order. */
export const ERROR_CODE_LIST = Object.keys(ERROR_CODES) as ErrorCode[]

/** The one failure shape every tool returns. */
export const ErrorEnvelope = Type.Object(
  {
    tool: Type.String({ description: 'The tool that was called, as named by the caller.' }),
    code: Type.Enum(ERROR_CODE_LIST, { description: 'What went wrong, from a closed set.' }),
    message: Type.String({ description: 'What was wrong, naming the property or path.' }),
    hint: Type.String({ description: 'What would be allowed instead.' }),
    is_preflight: Type.Boolean({ description: 'True when nothing ran and nothing changed.' }),
  },
  { additionalProperties: false },
)
export type ErrorEnvelope = Static<typeof ErrorEnvelope>

/** True when `name` is one of the ten tools. */
export function isToolName(name: string): name is (typeof TOOL_NAMES)[number] {
  return (TOOL_NAMES as readonly string[]).includes(name)
}

/** True when `code` is in the closed set. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_CODES, code)
}

/** Fields of the envelope a runtime supplies; the surface adds `tool`. */
export interface ToolErrorFields {
  code: ErrorCode
  message: string
  hint: string
  is_preflight: boolean
}

/**
 * The error runtimes throw (or reject with) when a tool cannot act. It carries the envelope
 * fields, so the surface maps it to the envelope without guessing.
 */
export class ToolError extends Error implements ToolErrorFields {
  override readonly name = 'ToolError'
  readonly code: ErrorCode
  readonly hint: string
  readonly is_preflight: boolean

  constructor(fields: ToolErrorFields, options?: { cause?: unknown }) {
    super(fields.message, options)
    this.code = fields.code
    this.hint = fields.hint
    this.is_preflight = fields.is_preflight
  }

  /** The envelope fields as a plain object. */
  toFields(): ToolErrorFields {
    return { code: this.code, message: this.message, hint: this.hint, is_preflight: this.is_preflight }
  }
}

/** True for a ToolError, or any value carrying the four envelope fields with a known code. */
export function isToolErrorLike(value: unknown): value is ToolErrorFields {
  if (value instanceof ToolError) return true
  if (value === null || typeof value !== 'object') return false
  const v = value as Record<string, unknown>
  return isErrorCode(v['code']) && typeof v['message'] === 'string' && typeof v['hint'] === 'string' && typeof v['is_preflight'] === 'boolean'
}

/**
 * Map anything thrown by a runtime to the envelope for `tool`. A ToolError keeps its fields;
 * any other value becomes `internal`, not preflight, since what it did is unknown.
 */
export function toErrorEnvelope(tool: string, thrown: unknown): ErrorEnvelope {
  if (isToolErrorLike(thrown)) {
    return { tool, code: thrown.code, message: thrown.message, hint: thrown.hint, is_preflight: thrown.is_preflight }
  }
  const detail = thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown)
  return {
    tool,
    code: 'internal',
    message: `${tool} failed unexpectedly: ${detail}`,
    hint: 'This is a bug in hands; the state of the filesystem or processes may have changed, so check before retrying.',
    is_preflight: false,
  }
}
