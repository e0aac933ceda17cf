import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { GoneFiles } from '../src/output/gone-files.ts'
import { SpoolBudget } from '../src/output/spool-budget.ts'
import { tempDir } from './helpers.ts'

describe('the spool budget', () => {
  it('for any files, never admits more than its limit, removes only complete files and the oldest first', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 1500 }),
        (files, limit) => {
          const dir = tempDir('budget')
          const budget = new SpoolBudget(limit, new GoneFiles(dir))
          const accounts = []
          for (const [i, writes] of files.entries()) {
            const account = budget.open(join(dir, `run-${i}.stdout`))
            for (const n of writes) {
              const got = budget.take(account, n)
              expect(got).toBeGreaterThanOrEqual(0)
              expect(got).toBeLessThanOrEqual(n)
            }
            accounts.push(account)
            const onDisk = accounts.filter((a) => !a.isGone).reduce((s, a) => s + a.bytes, 0)
            expect(onDisk).toBeLessThanOrEqual(limit)
            // The oldest go first: a removed file has no older file still on disk.
            for (const [j, newer] of accounts.entries()) {
              if (newer.isGone) for (const older of accounts.slice(0, j)) expect(older.isGone || older.bytes === 0).toBe(true)
            }
            expect(account.isGone).toBe(false)
            budget.close(account)
          }
        },
      ),
      { numRuns: 300 },
    )
  })
})
