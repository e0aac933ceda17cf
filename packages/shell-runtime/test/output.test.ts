import { readFileSync, readdirSync } from 'node:fs'
import { checkResult, shellRun } from '@hands/contracts'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { BoundedCapture } from '../src/output/bounded-capture.ts'
import { GoneFiles } from '../src/output/gone-files.ts'
import { SpoolBudget } from '../src/output/spool-budget.ts'
import { logsUntil, makeRuntime, tempDir } from './helpers.ts'

function valid<T>(value: T): T {
  const outcome = checkResult(shellRun, value)
  if (!outcome.ok) throw new Error(`result breaks the contract: ${JSON.stringify(outcome.issues)}`)
  return value
}

function spoolPath(note: string | null | undefined): string {
  const m = /in (\/\S+?)[.,;]?(?:\s|$)/.exec(note ?? '')
  if (m === null) throw new Error(`no path in note: ${note}`)
  return m[1] as string
}

describe('shell_run output', () => {
  it('keeps the head and tail of a long stream, marks the omitted middle, and spools the whole stream', async () => {
    const { rt } = makeRuntime({ headBytes: 1024, tailBytes: 1024 })
    const r = valid(await rt.shell_run({ commands: ['seq 1 100000'] }))
    const c = r.commands[0]!
    expect(c.stdout.startsWith('1\n2\n3\n')).toBe(true)
    expect(c.stdout.endsWith('99999\n100000\n')).toBe(true)
    const omitted = Number(/\[… (\d+) bytes omitted …\]/.exec(c.stdout)?.[1])
    const whole = readFileSync(spoolPath(c.note))
    expect(whole.length).toBe(588895)
    expect(whole.toString()).toBe(Array.from({ length: 100000 }, (_, i) => `${i + 1}\n`).join(''))
    expect(Buffer.byteLength(c.stdout.replace(/\[… \d+ bytes omitted …\]\n/, ''))).toBe(whole.length - omitted)
    expect(c.stdout.length).toBeLessThan(2200)
    expect(c.note).toContain('588895 bytes')
  })

  it('keeps a short stream whole, with no note and no spool file', async () => {
    const { rt } = makeRuntime()
    const r = valid(await rt.shell_run({ commands: ['printf "%s" "$(seq 1 1000)"'] }))
    expect(r.commands[0]?.stdout).toBe(Array.from({ length: 1000 }, (_, i) => `${i + 1}`).join('\n'))
    expect(r.commands[0]?.note).toBeNull()
    expect(readdirSync(rt.spoolDir).filter((f) => f.startsWith('run-'))).toEqual([])
  })

  it('bounds stderr the same way as stdout', async () => {
    const { rt } = makeRuntime({ headBytes: 100, tailBytes: 100 })
    const r = valid(await rt.shell_run({ commands: ['seq 1 10000 >&2; echo out'] }))
    expect(r.commands[0]?.stdout).toBe('out\n')
    expect(r.commands[0]?.stderr).toMatch(/^1\n2\n[\s\S]*omitted[\s\S]*\n10000\n$/)
    expect(r.commands[0]?.note).toContain('stderr')
  })

  it('keeps memory flat and keeps the first and last lines through 1 GiB of output', async () => {
    const { rt } = makeRuntime()
    const before = process.memoryUsage().rss
    let peak = before
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss)
    }, 20)
    const r = valid(await rt.shell_run({ commands: ['echo FIRST-LINE; head -c 1073741824 /dev/zero | tr "\\0" "x" | fold -w 100; echo; echo LAST-LINE'] }))
    clearInterval(sampler)
    const c = r.commands[0]!
    expect(c.exit).toBe(0)
    expect(c.stdout.startsWith('FIRST-LINE\n')).toBe(true)
    expect(c.stdout.endsWith('\nLAST-LINE\n')).toBe(true)
    expect(c.stdout.length).toBeLessThan(40 * 1024)
    expect(c.note).toMatch(/was 10\d{8} bytes/)
    expect(peak - before).toBeLessThan(96 * 1024 * 1024)
  }, 1200_000)

  it('cleans escape sequences out of stdout, says so, and keeps the raw bytes in the spool file', async () => {
    const { rt } = makeRuntime()
    const r = valid(
      await rt.shell_run({
        commands: [
          "printf 'A\\033]52;c;ZWNobyBwd25lZA==\\a\\033]0;title\\a\\033[2J'",
          "printf '\\033]8;;http://example.com\\033\\\\link\\033]8;;\\033\\\\ \\033P1$r0m\\033\\\\done\\n\\033[31mred\\033[0m\\n' >&2",
        ],
      }),
    )
    const [clip, link] = r.commands
    expect(clip?.stdout).toBe('A')
    expect(clip?.note).toContain('stdout was cleaned for reading')
    expect(readFileSync(spoolPath(clip?.note ?? null))).toEqual(Buffer.from('A\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b]0;title\x07\x1b[2J'))
    expect(link?.stderr).toBe('link done\nred\n')
    expect(link?.note).toContain('stderr was cleaned for reading')
  })

  it('collapses 200 carriage-return progress redraws to their final state', async () => {
    const { rt } = makeRuntime()
    const r = valid(await rt.shell_run({ commands: ["for i in $(seq 1 200); do printf '\\rprogress %3d%%' $i; done; echo; echo next"] }))
    expect(r.commands[0]?.stdout).toBe('progress 200%\nnext\n')
  })

  it('leaves plain output byte for byte: tabs, trailing blanks, no note', async () => {
    const { rt } = makeRuntime()
    const r = valid(await rt.shell_run({ commands: ["printf 'a\\tb  \\n\\tindented\\n'"] }))
    expect(r.commands[0]?.stdout).toBe('a\tb  \n\tindented\n')
    expect(r.commands[0]?.note).toBeNull()
  })

  it('writes bidi overrides, zero-width and tag characters out visibly, in shell_run and shell_logs', async () => {
    const { rt } = makeRuntime()
    const line = "printf 'invoice\\u202Etxt.exe ok\\u200Bhidden \\U000E0041\\n'"
    const r = valid(await rt.shell_run({ commands: [line] }))
    expect(r.commands[0]?.stdout).toBe('invoice<U+202E>txt.exe ok<U+200B>hidden <U+E0041>\n')
    expect(r.commands[0]?.note).toContain('<U+XXXX>')
    const b = await rt.shell_background({ commands: [line] })
    const lines = await logsUntil(rt, b.id, (l) => l.length > 0)
    expect(lines).toEqual(['invoice<U+202E>txt.exe ok<U+200B>hidden <U+E0041>'])
  })

  it('turns invalid UTF-8 into U+FFFD and names binary output in the note', async () => {
    const { rt } = makeRuntime()
    const r = valid(await rt.shell_run({ commands: ["printf 'ok \\xff\\xfe end\\n'", "printf '\\x00\\x01\\x02binary\\x00\\xff'", 'echo fine'] }))
    expect(r.commands[0]?.stdout).toBe('ok \uFFFD\uFFFD end\n')
    expect(r.commands[0]?.note).toBeNull()
    const bin = r.commands[1]!
    expect(bin.note).toContain('binary')
    expect(() => JSON.parse(JSON.stringify(bin.stdout))).not.toThrow()
    expect(readFileSync(spoolPath(bin.note))).toEqual(Buffer.from([0, 1, 2, ...Buffer.from('binary'), 0, 0xff]))
    expect(r.commands[2]?.note).toBeNull()
  })

  it('names binary output when the bytes are too many to keep', async () => {
    const { rt } = makeRuntime({ headBytes: 4096, tailBytes: 4096 })
    const r = valid(await rt.shell_run({ commands: ['head -c 1000000 /dev/urandom'] }))
    expect(r.commands[0]?.note).toContain('binary')
    expect(readFileSync(spoolPath(r.commands[0]?.note?.split('omitted')[1])).length).toBe(1000000)
  })

  it('never splits a UTF-8 character at the head or tail cut', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ unit: 'binary', maxLength: 40 }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 1, max: 64 }),
        async (parts, head, tail) => {
          const dir = tempDir('capture')
          const cap = new BoundedCapture(head, tail, `${dir}/spool`, false, new SpoolBudget(Number.MAX_SAFE_INTEGER, new GoneFiles(dir)))
          const bytes = Buffer.from(parts.join(''))
          // Feed in odd-sized chunks so characters straddle chunk boundaries.
          for (let i = 0; i < bytes.length; i += 7) cap.push(bytes.subarray(i, i + 7))
          const out = await cap.finish()
          expect(out.totalBytes).toBe(bytes.length)
          const text = bytes.toString('utf8')
          if (out.omittedBytes === 0) {
            expect(out.text).toBe(text)
            return
          }
          // A split character would decode to U+FFFD where the original has none: startsWith/endsWith catch it.
          const marker = /\[… (\d+) bytes omitted …\]\n/.exec(out.text) as RegExpExecArray
          expect(Number(marker[1])).toBe(out.omittedBytes)
          const shown = out.text.slice(0, marker.index)
          const t = out.text.slice(marker.index + marker[0].length)
          // The marker starts on its own line: a newline before it is the head's own, or added.
          const h = [shown, shown.slice(0, -1)].find((c) => Buffer.byteLength(c) + Buffer.byteLength(t) + out.omittedBytes === bytes.length)
          expect(h).toBeDefined()
          expect(text.startsWith(h as string)).toBe(true)
          expect(text.endsWith(t)).toBe(true)
          expect(readFileSync(`${dir}/spool`)).toEqual(bytes)
        },
      ),
      { numRuns: 300 },
    )
  })

  it('leaks no file descriptors over 1,000 sequential calls', async () => {
    const { rt } = makeRuntime()
    await rt.shell_run({ commands: ['true'] })
    const fds = () => readdirSync('/proc/self/fd').length
    const before = fds()
    for (let i = 0; i < 1000; i++) await rt.shell_run({ commands: ['echo x; echo y >&2'] })
    await new Promise((r) => setTimeout(r, 100))
    expect(fds() - before).toBeLessThanOrEqual(2)
  }, 600_000)
})
