import { afterEach, describe, expect, it } from 'vitest'
import { SHELL_LIMITS } from '@hands/shell-runtime'
import { parse, sessionOptions, UsageError } from '../src/cli/args.ts'
import { connectStdio, envelope, structured } from './helpers/mcp.ts'
import { eventually, isAlive, processesMentioning } from './helpers/procs.ts'
import { tempRoot } from './helpers/tmp.ts'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.()
})

function options(argv: string[]) {
  return sessionOptions(parse(argv, {}).values)
}

describe('shell limits as server flags', () => {
  it('map each flag to its option, sizes in bytes or KiB, MiB, GiB', () => {
    expect(options(['--log-bytes', '8MiB', '--spool-bytes', '1G', '--max-shells', '3', '--ring-bytes', '512KiB', '--type-queue-bytes', '4096'])).toMatchObject({
      logBytes: 8 * 1024 ** 2,
      spoolBytes: 1024 ** 3,
      maxShells: 3,
      ringBytes: 512 * 1024,
      typeQueueBytes: 4096,
    })
    const none = options([])
    for (const name of Object.keys(SHELL_LIMITS)) expect(none).not.toHaveProperty(name)
  })

  it('refuse a value that is not a size, or below the limit’s minimum, naming the flag', () => {
    expect(() => options(['--log-bytes', '12X'])).toThrow(UsageError)
    expect(() => options(['--log-bytes', '12X'])).toThrow(/--log-bytes takes a positive size/)
    expect(() => options(['--spool-bytes', '0'])).toThrow(/--spool-bytes/)
    expect(() => options(['--log-bytes', '1'])).toThrow(/--log-bytes takes at least 2/)
    expect(() => options(['--max-shells', '2MiB'])).toThrow(/--max-shells takes a positive integer/)
  })

  it('reach the runtime behind `hands serve`: one shell too many and input past the queue are refused with limit_reached', async () => {
    const root = tempRoot()
    cleanups.push(root.remove)
    const c = await connectStdio(['--root', root.dir, '--max-shells', '1', '--type-queue-bytes', '1KiB'])
    cleanups.push(async () => {
      await c.client.close().catch(() => {})
    })
    const first = structured<{ id: string; pid: number }>(
      await c.client.callTool({ name: 'shell_background', arguments: { commands: ['stty raw -echo; sleep 1000'], id: 'one' } }),
    )
    const second = envelope(await c.client.callTool({ name: 'shell_background', arguments: { commands: ['sleep 1000'], id: 'two' } }))
    expect(second).toMatchObject({ tool: 'shell_background', code: 'limit_reached', is_preflight: true })
    expect(second['hint']).toContain('shell_stop')
    expect(second['hint']).toContain('`one`')
    const typed = envelope(await c.client.callTool({ name: 'shell_type', arguments: { id: 'one', text: 'x'.repeat(2048), is_enter: false } }))
    expect(typed).toMatchObject({ code: 'limit_reached', is_preflight: true })
    expect(typed['message']).toContain('1 KiB')
    const serverPid = c.transport.pid
    await c.client.close()
    expect(await eventually(() => serverPid === null || !isAlive(serverPid))).toBe(true)
    expect(isAlive(first.pid)).toBe(false)
    expect(await eventually(() => processesMentioning(root.dir).length === 0)).toBe(true)
  }, 120_000)
})
