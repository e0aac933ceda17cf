import { afterAll, beforeAll } from 'vitest'
import { setPinning } from '../../src/handle/dir.ts'
import { casesAt } from './cases.ts'
import { runTable } from './table.ts'

// The fallback for systems without /proc: real paths re-verified before each step.
beforeAll(() => setPinning(false))
afterAll(() => setPinning(true))

runTable('containment table (fallback without /proc: paths re-verified)', casesAt(300))
