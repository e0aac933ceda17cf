/**
 * Which rows of a terminal's history a reader was shown, so that the lines leaving the top of the
 * scrollback can be counted exactly as dropped unseen. Rows are numbered from the first row the
 * terminal ever had; each read records the range of rows it returned (sorted, disjoint ranges).
 * A line is the rows a long line wrapped into: it counts as dropped once its last row has left the
 * history, when no read returned any of its rows (a read that returned only its end, its start
 * already gone, returned it).
 */
export class SeenRows {
  /** Returned ranges [from, to), sorted and disjoint, none wholly below the oldest retained row. */
  #returned: Array<[number, number]> = []
  #dropped = 0
  /** True when a read returned a row of the line at the top of the history (the one whose rows are leaving). */
  #isTopSeen = false

  /** Row `row`, the oldest retained, left the history; `isLineEnd`: the row after it starts a new line. */
  evicted(row: number, isLineEnd: boolean): void {
    const ranges = this.#returned
    let first = ranges[0]
    while (first !== undefined && first[1] <= row) {
      ranges.shift()
      first = ranges[0]
    }
    if (first !== undefined && first[0] <= row) this.#isTopSeen = true
    if (!isLineEnd) return
    if (!this.#isTopSeen) this.#dropped++
    this.#isTopSeen = false
  }

  /** Row `row`, the oldest retained, left the history holding nothing ever written: it was no line. */
  evictedBlank(row: number): void {
    const ranges = this.#returned
    while (ranges.length > 0 && (ranges[0] as [number, number])[1] <= row + 1) ranges.shift()
    this.#isTopSeen = false
  }

  /**
   * Lines that were never parsed (skipped while held back) left the history, occupying rows
   * [from, from + rows): `spans` gives the rows of the first of them, covering at least the
   * first `existing` rows, which were rows of the terminal before (and may have been returned, as
   * what they held then); the rest never existed. The line before them ended at `from - 1`, and
   * the row after them starts a line.
   */
  skipped(from: number, rows: number, lines: number, spans: readonly number[], existing: number): void {
    const ranges = this.#returned
    let at = from
    let left = lines
    for (const span of spans) {
      if (at >= from + existing || left === 0) break
      const end = Math.min(at + span, from + existing)
      let isSeen = false
      for (const [a, b] of ranges) {
        if (a >= end) break
        if (b > at) {
          isSeen = true
          break
        }
      }
      if (!isSeen) this.#dropped++
      left--
      at += span
    }
    this.#dropped += left
    while (ranges.length > 0 && (ranges[0] as [number, number])[1] <= from + rows) ranges.shift()
    this.#isTopSeen = false
  }

  /** A read returned rows [from, to). */
  returned(from: number, to: number): void {
    if (to <= from) return
    const ranges = this.#returned
    // Ranges that start inside [from, to) are covered by it; one that reaches `from` is extended.
    while (ranges.length > 0 && (ranges[ranges.length - 1] as [number, number])[0] >= from) {
      const last = ranges.pop() as [number, number]
      to = Math.max(to, last[1])
    }
    const last = ranges[ranges.length - 1]
    if (last !== undefined && last[1] >= from) last[1] = Math.max(last[1], to)
    else ranges.push([from, to])
  }

  /** Lines dropped unseen since the previous call; resets the count. */
  takeDropped(): number {
    const d = this.#dropped
    this.#dropped = 0
    return d
  }
}
