import { SHELL_BACKGROUND } from '@hands/contracts'
import { bytesText } from '../limits/limits.ts'
import type { CapturedStream } from '../output/bounded-capture.ts'
import type { SpoolBudget } from '../output/spool-budget.ts'
import type { StopReport } from '@hands/sandbox/parts'

/** Join note sentences; null when there are none. */
export function joinNotes(parts: Array<string | null | undefined | false>): string | null {
  const kept = parts.filter((p): p is string => typeof p === 'string' && p !== '')
  return kept.length === 0 ? null : kept.join(' ')
}

function plural(n: number, one: string, many = `${one}es`): string {
  return `${n} ${n === 1 ? one : many}`
}

/** Where the note sends a reader for what the text does not show: `normal`, unless the spool budget capped or removed the file. */
function spooled(s: CapturedStream, budget: SpoolBudget, normal: (path: string) => string): string {
  const account = s.spool
  if (s.spoolPath === null) {
    return account?.isCapped ? `; none of it could be kept on disk: this session's spool files are at their ${bytesText(budget.limit)} budget.` : '.'
  }
  if (account?.isGone) return `; it was kept in ${s.spoolPath}, removed since ${budget.reason}.`
  if (account?.isCapped) {
    return `; the first ${bytesText(account.bytes)} of it are in ${s.spoolPath} (this session's ${bytesText(budget.limit)} spool budget stopped the file there).`
  }
  return normal(s.spoolPath)
}

/** What the note says about one bounded stream: omission, binary data, where the whole stream is (or was). */
export function streamNote(name: 'stdout' | 'stderr', s: CapturedStream, budget: SpoolBudget): string | null {
  const parts: string[] = []
  if (s.isBinary) {
    parts.push(
      `${name} looks like binary data (${s.totalBytes} bytes), shown decoded with U+FFFD for invalid bytes` +
        spooled(s, budget, (path) => `; the exact bytes are in ${path}.`),
    )
  }
  if (s.isCleaned) {
    parts.push(
      `${name} was cleaned for reading (terminal escape sequences removed, carriage-return and backspace redraws shown as their final state, invisible bidi and zero-width characters written as <U+XXXX>)` +
        spooled(s, budget, (path) => `; the raw bytes are in ${path}.`),
    )
  }
  if (s.omittedBytes > 0) {
    parts.push(
      `${name} was ${s.totalBytes} bytes; the middle ${s.omittedBytes} bytes are omitted` +
        spooled(s, budget, (path) => `, and the whole stream is in ${path}.`),
    )
  }
  if (s.spoolError !== null) parts.push(`The whole ${name} could not be kept on disk: ${s.spoolError}.`)
  const evicted = s.spool?.evicted ?? []
  if (evicted.length > 0) {
    const named = evicted.slice(0, 5).join(', ') + (evicted.length > 5 ? ` and ${evicted.length - 5} more` : '')
    parts.push(`Older spool files were removed ${budget.reason}: ${named}.`)
  }
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
