import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { describe, expect, it } from 'vitest'
import { handsArgv } from './helpers/cli.ts'
import { REPO } from './helpers/mcp.ts'
import { eventually, isAlive, processesMentioning } from './helpers/procs.ts'
import { tempRoot } from './helpers/tmp.ts'

/** Start the server process itself (no pnpm in between), so a signal reaches it directly. */
function startServer(root: string) {
  const [command, ...argv] = handsArgv(['serve', '--root', root])
  const child = spawn(command, argv, {
    cwd: REPO,
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  const replies = new Map<number, (r: Record<string, unknown>) => void>()
  createInterface({ input: child.stdout }).on('line', (line) => {
    const msg = JSON.parse(line) as { id?: number; result?: Record<string, unknown> }
    if (msg.id !== undefined) replies.get(msg.id)?.(msg.result ?? {})
  })
  let id = 0
  const request = (method: string, params: unknown) =>
    new Promise<Record<string, unknown>>((resolve) => {
      replies.set(++id, resolve)
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
    })
  const exit = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  return { child, request, exit }
}

describe('hands serve on a signal', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`stops every shell and exits 0 on ${signal}`, async () => {
      const root = tempRoot()
      try {
        const s = startServer(root.dir)
        await s.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'signals', version: '0' } })
        s.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`)
        const started = await s.request('tools/call', { name: 'shell_background', arguments: { commands: ['sleep 1000'], id: 'sl' } })
        const pid = (started['structuredContent'] as { pid: number }).pid
        expect(isAlive(pid)).toBe(true)
        s.child.kill(signal)
        expect(await s.exit).toEqual({ code: 0, signal: null })
        expect(await eventually(() => !isAlive(pid))).toBe(true)
        expect(await eventually(() => processesMentioning(root.dir).length === 0)).toBe(true)
      } finally {
        root.remove()
      }
    }, 120_000)
  }
})
