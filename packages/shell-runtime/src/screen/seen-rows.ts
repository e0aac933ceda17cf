/**
 * Which rows of a terminal's history a reader was shown, so that rows leaving the top of the
 * scrollback can be counted exactly as dropped unseen. Rows are numbered from the first row the
 * terminal ever had; each read records the range it returned (sorted, disjoint ranges).
 */
export class SeenRows {
  /** Returned ranges [from, to), sorted and disjoint, none wholly below the oldest retained row. */
  #returned: Array<[number, number]> = []
  #dropped = 0

  /** Rows [from, from + count) left the history: count the ones no read returned. */
  evicted(from: number, count: number): void {
    const to = from + count
    let seen = 0
    for (const [a, b] of this.#returned) {
      if (a >= to) break
      seen += Math.max(0, Math.min(b, to) - Math.max(a, from))
    }
    this.#dropped += count - seen
    const ranges = this.#returned
    while (ranges.length > 0 && (ranges[0] as [number, number])[1] <= to) ranges.shift()
  }

  /** Rows [from, from + count) were never shown to anyone and are gone. */
  skipped(count: number): void {
    this.#dropped += count
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

  /** Rows dropped unseen since the previous call; resets the count. */
  takeDropped(): number {
    const d = this.#dropped
    this.#dropped = 0
    return d
  }
}
