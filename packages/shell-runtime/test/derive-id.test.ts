import { describe, expect, it } from 'vitest'
import { freeId, programName } from '../src/shells/derive-id.ts'

describe('shell ids', () => {
  it('derive from the program the first command runs', () => {
    expect(programName('npm run dev')).toBe('npm')
    expect(programName('PORT=3000 NODE_ENV=dev node server.js')).toBe('node')
    expect(programName('./node_modules/.bin/vite --port 5173')).toBe('vite')
    expect(programName('cd web && pnpm dev')).toBe('pnpm')
    expect(programName('nohup env FOO=1 python3 -m http.server')).toBe('python3')
    expect(programName('"/opt/my tools/run.sh" x')).toBe('run.sh')
    expect(programName('   ')).toBe('shell')
  })

  it('get -2, -3 on a collision', () => {
    const taken = new Set(['npm', 'npm-2'])
    expect(freeId('npm', (x) => taken.has(x))).toBe('npm-3')
    expect(freeId('node', (x) => taken.has(x))).toBe('node')
  })
})
