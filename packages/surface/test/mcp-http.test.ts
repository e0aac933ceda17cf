import { spawn } from 'node:child_process'
import { request } from 'node:http'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterEach, describe, expect, it } from 'vitest'
import { TOOL_NAMES } from '@hands/contracts'
import { serveHttp, parseListen, isLoopback } from '@hands/surface'
import { handsArgv } from './helpers/cli.ts'
import { REPO, envelope, structured } from './helpers/mcp.ts'
import { eventually, isAlive, processesMentioning } from './helpers/procs.ts'
import { tempRoot } from './helpers/tmp.ts'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.()
})

describe('hands serve over Streamable HTTP', () => {
  it('serves the tools to an SDK client on loopback, keeps shells per session, and stops them when the session ends', async () => {
    const root = tempRoot()
    cleanups.push(root.remove)
    const running = await serveHttp({ host: '127.0.0.1', port: 0 }, { roots: [root.dir] })
    cleanups.push(() => running.close())
    const client = new Client({ name: 'hands-http-test', version: '0.0.0' })
    const transport = new StreamableHTTPClientTransport(new URL(running.url))
    await client.connect(transport)

    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(TOOL_NAMES)
    writeFileSync(join(root.dir, 'f.txt'), 'x')
    expect(structured(await client.callTool({ name: 'file_exists', arguments: { paths: ['f.txt'] } }))).toEqual({ paths: [{ path: 'f.txt', is_exists: true }] })
    const run = structured<{ commands: Array<{ stdout: string }> }>(await client.callTool({ name: 'shell_run', arguments: { commands: ['echo over http'] } }))
    expect(run.commands[0]?.stdout).toBe('over http\n')
    expect(envelope(await client.callTool({ name: 'move', arguments: { src: 'f.txt' } }))).toMatchObject({ code: 'invalid_input' })
    const bg = structured<{ pid: number }>(await client.callTool({ name: 'shell_background', arguments: { commands: ['sleep 1000'], id: 'sl' } }))
    expect(isAlive(bg.pid)).toBe(true)

    await transport.terminateSession()
    await client.close()
    expect(await eventually(() => !isAlive(bg.pid))).toBe(true)
    expect(await eventually(() => processesMentioning(root.dir).length === 0)).toBe(true)
  }, 120_000)

  it('refuses a non-loopback bind unless remote access is allowed', async () => {
    await expect(serveHttp({ host: '0.0.0.0', port: 0 })).rejects.toThrow(/--allow-remote/)
    expect(isLoopback('127.0.0.1')).toBe(true)
    expect(isLoopback('localhost')).toBe(true)
    expect(isLoopback('0.0.0.0')).toBe(false)
    expect(parseListen('[::1]:8080')).toEqual({ host: '::1', port: 8080 })
    expect(() => parseListen('8080')).toThrow(/HOST:PORT/)
  })

  it('rejects a request with a foreign Host header on loopback (DNS rebinding)', async () => {
    const running = await serveHttp({ host: '127.0.0.1', port: 0 })
    cleanups.push(() => running.close())
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    })
    const post = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          running.url,
          { method: 'POST', headers: { host, 'content-type': 'application/json', accept: 'application/json, text/event-stream' } },
          (res) => {
            res.resume()
            resolve(res.statusCode ?? 0)
          },
        )
        req.on('error', reject)
        req.end(body)
      })
    expect(await post('evil.example')).toBe(403)
    expect(await post(new URL(running.url).host)).toBe(200)
  })

  it('`hands serve --http` refuses 0.0.0.0 without --allow-remote and exits non-zero', async () => {
    const [command, ...argv] = handsArgv(['serve', '--http', '0.0.0.0:0'])
    const child = spawn(command, argv, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
    expect(code).not.toBe(0)
    expect(stderr).toContain('--allow-remote')
  }, 120_000)
})
