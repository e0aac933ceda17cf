import { constants } from 'node:os'

const byNumber = new Map<number, string>()
for (const [name, num] of Object.entries(constants.signals)) {
  if (!byNumber.has(num)) byNumber.set(num, name)
}

/** The name of signal `num` (`9` → `SIGKILL`), or null for a number no signal has. */
export function signalName(num: number): string | null {
  return byNumber.get(num) ?? null
}

/** The number of a signal given by name or number (`'SIGTERM'` → 15); null when unknown. */
export function signalNumber(signal: string | number | null | undefined): number | null {
  if (signal === null || signal === undefined || signal === 0) return null
  if (typeof signal === 'number') return byNumber.has(signal) ? signal : null
  const num = (constants.signals as Record<string, number>)[signal]
  return num ?? null
}

/** How a process ended, as the contracts report it. */
export interface Ending {
  /** Exit code; 128+N after a death by signal N. */
  exit: number
  /** The signal's name when the process died by a signal, else null. */
  signal: string | null
}

/** The exit a shell would report: the code itself, or 128+N for a death by signal N. */
export function endingOf(code: number | null, signal: string | number | null | undefined): Ending {
  const num = signalNumber(signal)
  if (num !== null) return { exit: 128 + num, signal: signalName(num) }
  return { exit: code ?? 0, signal: null }
}

/**
 * A sentence for a 128+N exit that bash reports when a command it ran died by signal N, or
 * null when `exit` is not in that range.
 */
export function shellSignalHint(exit: number): string | null {
  if (exit <= 128 || exit > 128 + 64) return null
  const name = signalName(exit - 128)
  return name === null ? null : `exit ${exit} is how bash reports a command killed by ${name} (128+${exit - 128})`
}
