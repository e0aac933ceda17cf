import { SHELL_BACKGROUND } from '@hands/contracts'
import type { CapturedStream } from '../output/bounded-capture.ts'
import type { StopReport } from '../tree/stop-tree.ts'

/** Join note sentences; null when there are none. */
export function joinNotes(parts: Array<string | null | undefined | false>): string | null {
  const kept = parts.filter((p): p is string => typeof p === 'string' && p !== '')
  return kept.length === 0 ? null : kept.join(' ')
}

function plural(n: number, one: string, many = `${one}es`): string {
  return `${n} ${n === 1 ? one : many}`
}

/** What the note says about one bounded stream: omission, binary data, where the whole stream is. */
export function streamNote(name: 'stdout' | 'stderr', s: CapturedStream): string | null {
  const parts: string[] = []
  if (s.isBinary) {
    parts.push(
      `${name} looks like binary data (${s.totalBytes} bytes), shown decoded with U+FFFD for invalid bytes` +
        (s.spoolPath !== null ? `; the exact bytes are in ${s.spoolPath}.` : '.'),
    )
  }
  if (s.isCleaned) {
    parts.push(
      `${name} was cleaned for reading (terminal escape sequences removed, carriage-return and backspace redraws shown as their final state, invisible bidi and zero-width characters written as <U+XXXX>)` +
        (s.spoolPath !== null ? `; the raw bytes are in ${s.spoolPath}.` : '.'),
    )
  }
  if (s.omittedBytes > 0) {
    parts.push(
      `${name} was ${s.totalBytes} bytes; the middle ${s.omittedBytes} bytes are omitted` +
        (s.spoolPath !== null ? `, and the whole stream is in ${s.spoolPath}.` : '.'),
    )
  }
  if (s.spoolError !== null) parts.push(`The whole ${name} could not be kept on disk: ${s.spoolError}.`)
  return joinNotes(parts)
}

/** What the note says about processes a command left running that were then stopped. */
export function leftoverNote(report: StopReport): string {
  const listed = report.found.join(', ')
  const more = report.foundCount > report.found.length ? ` and ${report.foundCount - report.found.length} more` : ''
  return (
    `It left ${plural(report.foundCount, 'process', 'processes')} running when it ended, now stopped` +
    `${report.forced ? ' (SIGKILL after SIGTERM and the grace)' : ''}: ${listed}${more}. ` +
    `Use ${SHELL_BACKGROUND} for anything that must keep running.`
  )
}

/** What the note says when some process could not be confirmed stopped. */
export function survivorNote(pids: number[]): string | null {
  return pids.length === 0 ? null : `Could not confirm the end of ${plural(pids.length, 'process', 'processes')} (pids ${pids.join(', ')}).`
}
