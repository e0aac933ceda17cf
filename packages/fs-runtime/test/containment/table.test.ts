import { runTable } from './table.ts'

runTable('containment table (directories pinned through /proc/self/fd)')
