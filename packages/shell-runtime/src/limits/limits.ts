/**
 * The host's bounds on what one session may hold on disk and in memory. Each is a host setting
 * (library option, server flag), never a tool parameter; docs/shell-runtime.md lists them with
 * what happens at each.
 */
export interface ShellLimits {
  /** Bytes one background shell's log keeps on disk, over `log_path` and `log_path.1`; default 64 MiB. */
  logBytes?: number
  /** Bytes of shell_run spool files one session keeps (the oldest go first); default 256 MiB. */
  spoolBytes?: number
  /** Background shells one session holds, running or exited, until shell_stop; default 16. */
  maxShells?: number
  /** Memory one background shell's history may take, beside `ringLines` (see `historyRows`); default 32 MiB. */
  ringBytes?: number
  /** Bytes of shell_type input waiting for a program to read it; default 1 MiB. */
  typeQueueBytes?: number
}

/** Each limit's default and the smallest value it takes (a log keeps two halves). */
export const SHELL_LIMITS: Record<keyof ShellLimits, { default: number; min: number }> = {
  logBytes: { default: 64 * 1024 * 1024, min: 2 },
  spoolBytes: { default: 256 * 1024 * 1024, min: 1 },
  maxShells: { default: 16, min: 1 },
  ringBytes: { default: 32 * 1024 * 1024, min: 1 },
  typeQueueBytes: { default: 1024 * 1024, min: 1 },
}

const LIMIT_NAMES = Object.keys(SHELL_LIMITS) as Array<keyof ShellLimits>

/** The limits with defaults applied; a value that is not an integer at or above its minimum throws (a host bug). */
export function resolveLimits(options: ShellLimits): Required<ShellLimits> {
  const out = {} as Required<ShellLimits>
  for (const name of LIMIT_NAMES) {
    const { default: fallback, min } = SHELL_LIMITS[name]
    const value = options[name] ?? fallback
    if (!Number.isSafeInteger(value) || value < min) throw new RangeError(`${name} must be an integer ≥ ${min} (got ${value})`)
    out[name] = value
  }
  return out
}

/**
 * What one row of a terminal's history costs: @xterm/headless keeps 3 × 32 bits per cell, plus
 * its line object (measured: 10,050 rows of 200 columns take ~30 MiB of RSS).
 */
export function rowBytes(cols: number): number {
  return cols * 12 + 512
}

/** The rows of history a background shell keeps: `ringLines`, or fewer when they would take more than `ringBytes`; at least 1. */
export function historyRows(ringLines: number, ringBytes: number, cols: number): number {
  return Math.max(1, Math.min(ringLines, Math.floor(ringBytes / rowBytes(cols))))
}

/** Only the limits of `options`, for passing a host's settings on. */
export function pickLimits(options: ShellLimits): ShellLimits {
  const out: ShellLimits = {}
  for (const name of LIMIT_NAMES) if (options[name] !== undefined) out[name] = options[name]
  return out
}

/**
 * A byte count as a person reads it: `64 MiB`, `256 KiB` when exact, else `1234 bytes`; as a SIZE
 * flag takes it (`flag`): `64MiB`, else `1234`.
 */
export function bytesText(n: number, form: 'prose' | 'flag' = 'prose'): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (n >= size && n % size === 0) return form === 'flag' ? `${n / size}${unit}` : `${n / size} ${unit}`
  }
  return form === 'flag' ? String(n) : `${n} bytes`
}
