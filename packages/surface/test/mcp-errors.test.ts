import { spawn } from 'node:child_process'
import { EmptyResultSchema } from '@modelcontextprotocol/sdk/types.js'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterEach, describe, expect, it } from 'vitest'
import { handsArgv } from './helpers/cli.ts'
import { connectAs } from './helpers/mcp.ts'
import { eventually, isAlive } from './helpers/procs.ts'
import { httpClient, serveHttpProcess } from './helpers/serve.ts'
import { tempRoot } from './helpers/tmp.ts'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.()
})

interface Reply {
  id: unknown
  result?: Record<string, unknown>
  error?: { code: number; message: string }
}

/** `hands serve` over stdio driven line by line: what a client that is not an SDK sends. */
function rawStdio() {
  const root = tempRoot()
  const [command, ...argv] = handsArgv(['serve', '--root', root.dir])
  const child = spawn(command, argv, { stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString()
  })
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString()
  })
  cleanups.push(async () => {
    child.stdin.end()
    await eventually(() => child.pid === undefined || !isAlive(child.pid))
    root.remove()
  })
  const replies = () =>
    out
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Reply)
  return {
    send: (line: string) => child.stdin.write(`${line}\n`),
    stderr: () => err,
    /** The reply with this id, once it came. */
    reply: async (id: unknown): Promise<Reply> => {
      expect(await eventually(() => replies().some((r) => r.id === id), 30_000), `no reply ${JSON.stringify(id)} in ${out}`).toBe(true)
      return replies().find((r) => r.id === id) as Reply
    },
    replies,
  }
}

const line = (message: unknown) => JSON.stringify(message)
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 'init',
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
}

describe('hands serve over stdio, strict as HTTP', () => {
  it('answers server/discover with Method not found at once, before the tools load, and refuses requests before initialize', async () => {
    const s = rawStdio()
    s.send(line({ jsonrpc: '2.0', id: 'discover', method: 'server/discover', params: {} }))
    expect((await s.reply('discover')).error).toMatchObject({ code: -32601 })
    expect(s.stderr()).not.toContain('serving MCP over stdio')
    s.send(line({ jsonrpc: '2.0', id: 'early', method: 'tools/list' }))
    const early = await s.reply('early')
    expect(early.error?.code).toBe(-32000)
    expect(early.error?.message).toBe('Bad Request: tools/list before initialize; start the session with an initialize request')
    s.send(line({ jsonrpc: '2.0', id: 'ping', method: 'ping' }))
    expect((await s.reply('ping')).result).toEqual({})

    s.send(line(INITIALIZE))
    expect((await s.reply('init')).result?.['serverInfo']).toMatchObject({ name: 'hands' })
    s.send(line({ ...INITIALIZE, id: 'again' }))
    expect((await s.reply('again')).error).toMatchObject({
      code: -32600,
      message: 'Invalid Request: this session is already initialized; initialize is sent once',
    })
    s.send(line({ jsonrpc: '2.0', method: 'notifications/initialized' }))
    s.send(line({ jsonrpc: '2.0', id: 'list', method: 'tools/list' }))
    expect((await s.reply('list')).result?.['tools']).toHaveLength(10)
  }, 120_000)

  it('answers a line that is not JSON with -32700 and id null, one that is no JSON-RPC message with -32600, and goes on serving', async () => {
    const s = rawStdio()
    s.send(line(INITIALIZE))
    await s.reply('init')
    s.send('this is not json')
    s.send(line({ id: 7, hello: 'world' }))
    s.send(line({ jsonrpc: '2.0', id: 'after', method: 'ping' }))
    expect((await s.reply('after')).result).toEqual({})
    const [, parse, invalid] = s.replies()
    expect(parse).toMatchObject({ id: null, error: { code: -32700 } })
    expect(parse?.error?.message).toMatch(/^Parse error: the line is not JSON \(.+\); send one JSON-RPC message per line$/)
    expect(invalid).toMatchObject({ id: 7, error: { code: -32600 } })
    expect(invalid?.error?.message).toContain('is not a JSON-RPC 2.0 message')
  }, 120_000)
})

/** Bad params of every kind, each with the field its one-line message must name. */
const BAD_PARAMS: Array<{ method: string; params: Record<string, unknown>; names: string }> = [
  { method: 'tools/call', params: { name: 'file_exists', arguments: [1, 2] }, names: 'params.arguments' },
  { method: 'tools/call', params: { arguments: {} }, names: 'params.name' },
  { method: 'logging/setLevel', params: { level: 'loud' }, names: 'params.level' },
  { method: 'resources/read', params: {}, names: 'params.uri' },
  { method: 'prompts/get', params: {}, names: 'params.name' },
  { method: 'tools/list', params: { cursor: 'page-2' }, names: 'unknown cursor "page-2"' },
  { method: 'resources/list', params: { cursor: 'x' }, names: 'unknown cursor "x"' },
  { method: 'resources/templates/list', params: { cursor: 'x' }, names: 'unknown cursor "x"' },
  { method: 'prompts/list', params: { cursor: 'x' }, names: 'unknown cursor "x"' },
]

async function expectInvalidParams(client: Client) {
  for (const { method, params, names } of BAD_PARAMS) {
    const e = (await client.request({ method, params } as never, EmptyResultSchema).catch((x: unknown) => x)) as { code?: number; message?: string }
    expect(e.code, `${method} ${JSON.stringify(params)}`).toBe(-32602)
    expect(e.message).toContain(`Invalid params for ${method}: `)
    expect(e.message).toContain(names)
    expect(e.message).not.toContain('\n')
  }
  // The session is fine after all of them.
  expect((await client.listTools()).tools).toHaveLength(10)
}

describe('bad params of any method, through the SDK client', () => {
  it('over stdio: -32602 with one line naming the field', async () => {
    const root = tempRoot()
    cleanups.push(root.remove)
    const c = await connectAs(['--root', root.dir])
    cleanups.push(() => c.client.close())
    await expectInvalidParams(c.client)
  }, 120_000)

  it('over HTTP: the same', async () => {
    const s = await serveHttpProcess()
    cleanups.push(() => s.stop())
    const c = await httpClient(s.url)
    cleanups.push(() => c.client.close())
    await expectInvalidParams(c.client)
  }, 120_000)
})
