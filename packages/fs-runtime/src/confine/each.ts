import { firstRefusal } from '../errors/refuse.ts'

/**
 * Check the paths of one call with `check`, one after another in input order, going on past a
 * failure, and resolve to the results in input order. When any failed, reject once with
 * {@link firstRefusal}: every path outside the roots named together, else the first failure.
 */
export async function checkEach<I, T>(roots: readonly string[], items: readonly I[], check: (item: I, index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = []
  const failures: unknown[] = []
  for (const [i, item] of items.entries()) {
    try {
      results.push(await check(item, i))
    } catch (cause) {
      failures.push(cause)
    }
  }
  if (failures.length > 0) throw firstRefusal(failures, roots)
  return results
}
