import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const REPO = join(import.meta.dirname, '..', '..')

/** The calls named (`__NR_x`, `SYS_x`, `NR_X`) between `start` and the next `};` of a C file, lower-cased. */
function callsIn(file: string, start: RegExp): string[] {
  const text = readFileSync(join(REPO, file), 'utf8')
  const at = text.search(start)
  if (at < 0) throw new Error(`${file}: no ${start}`)
  const block = text.slice(at, text.indexOf('};', at))
  return [...new Set([...block.matchAll(/\b(?:__NR_|SYS_|NR_)(\w+)/g)].map((m) => (m[1] as string).toLowerCase()))].sort()
}

describe('the notification floor of pnpm bench effects', () => {
  it('supervises the very calls the relay records on the native table, so the floor and the relay pay for the same calls', () => {
    const relay = callsIn('packages/sandbox/native/seccomp.c', /native_calls\[\] = \{/)
    const floor = [
      ...callsIn('tools/bench/fixtures/notify-floor.c', /always\[\] = \{/),
      ...callsIn('tools/bench/fixtures/notify-floor.c', /opens\[\] = \{/),
    ].sort()
    expect(relay.length).toBeGreaterThan(30)
    expect(floor).toEqual(relay)
  })

  it('supervises with --metadata-only the very calls the guard sends on the native table', () => {
    const guard = callsIn('packages/sandbox/native/seccomp.c', /native_meta\[\] = \{/)
    const floor = callsIn('tools/bench/fixtures/notify-floor.c', /metadata\[\] = \{/)
    expect(guard.length).toBeGreaterThan(15)
    expect(floor).toEqual(guard)
  })
})
