import { spawn, spawnSync } from 'node:child_process'
import { afterEach, describe, expect, it } from 'vitest'
import { handsArgv } from './helpers/cli.ts'
import { REPO } from './helpers/mcp.ts'
import { eventually, isAlive } from './helpers/procs.ts'
import { tempRoot } from './helpers/tmp.ts'

const cleanups: Array<() => void> = []
afterEach(() => {
  while (cleanups.length > 0) cleanups.pop()?.()
})

const line = (message: unknown) => `${JSON.stringify(message)}\n`
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
}

describe('hands serve over stdio, start-up', () => {
  it('answers requests sent before the tools loaded, in order, even without the initialized notification', async () => {
    const root = tempRoot()
    cleanups.push(root.remove)
    const [command, ...argv] = handsArgv(['serve', '--root', root.dir])
    const child = spawn(command, argv, { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'] })
    cleanups.push(() => child.kill('SIGKILL'))
    let out = ''
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString()
    })
    // Written at once: tools/list and tools/call arrive while the tools are still loading.
    child.stdin.write(
      line(INITIALIZE) +
        line({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) +
        line({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'file_exists', arguments: { paths: ['.'] } } }),
    )
    expect(await eventually(() => out.split('\n').filter((l) => l.trim() !== '').length >= 3, 60_000)).toBe(true)
    const replies = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: number; result: Record<string, unknown> })
    expect(replies.map((r) => r.id)).toEqual([1, 2, 3])
    expect(replies[0]?.result['serverInfo']).toMatchObject({ name: 'hands' })
    expect(replies[1]?.result['tools']).toHaveLength(10)
    expect(replies[2]?.result['structuredContent']).toEqual({ paths: [{ path: '.', is_exists: true }] })
    child.stdin.end()
    expect(await eventually(() => child.pid === undefined || !isAlive(child.pid))).toBe(true)
  }, 180_000)

  it('answers tools/list from the generated tool list without loading the tools, and loads them once the client has initialized', async () => {
    const root = tempRoot()
    cleanups.push(root.remove)
    const [command, ...argv] = handsArgv(['serve', '--root', root.dir, '--no-shell'])
    const child = spawn(command, argv, { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'] })
    cleanups.push(() => child.kill('SIGKILL'))
    let out = ''
    let err = ''
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString()
    })
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString()
    })
    child.stdin.write(line(INITIALIZE) + line({ jsonrpc: '2.0', id: 2, method: 'tools/list' }))
    expect(await eventually(() => out.includes('"id":2'), 60_000)).toBe(true)
    const list = JSON.parse(out.trim().split('\n')[1] as string) as { result: { tools: Array<{ name: string }> } }
    expect(list.result.tools.map((t) => t.name)).toEqual(['copy', 'move', 'delete', 'create_directory', 'file_exists'])
    // Nothing asked for the tools yet: they have not loaded.
    await new Promise((r) => setTimeout(r, 500))
    expect(err).not.toContain('serving MCP over stdio')
    child.stdin.write(line({ jsonrpc: '2.0', method: 'notifications/initialized' }))
    expect(await eventually(() => err.includes('serving MCP over stdio'), 60_000)).toBe(true)
    child.stdin.end()
    expect(await eventually(() => child.pid === undefined || !isAlive(child.pid))).toBe(true)
  }, 180_000)

  it('refuses a --root that is not a directory with exit 2 before the handshake, naming it', () => {
    const [command, ...argv] = handsArgv(['serve', '--root', '/nonexistent/hands-root'])
    const r = spawnSync(command, argv, {
      cwd: REPO,
      encoding: 'utf8',
      input: '',
      timeout: 120_000,
    })
    expect(r.status).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain('--root /nonexistent/hands-root is not a directory')
  }, 120_000)
})
