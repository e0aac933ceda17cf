import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ElicitRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it } from 'vitest'
import { serveHttp, type SurfaceOptions } from '@hands/surface'
import { envelope, structured } from './helpers/mcp.ts'
import { eventually } from './helpers/procs.ts'
import { INITIALIZE, httpClient, jsonRpc, post } from './helpers/serve.ts'
import { tempRoot } from './helpers/tmp.ts'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.()
})

async function served(options: SurfaceOptions = {}) {
  const root = tempRoot()
  cleanups.push(root.remove)
  const running = await serveHttp({ host: '127.0.0.1', port: 0 }, { roots: [root.dir], ...options })
  cleanups.push(() => running.close())
  return { running, root: root.dir }
}

async function connected(url: string, capabilities: Record<string, unknown> = {}) {
  const c = await httpClient(url, capabilities)
  cleanups.push(() => c.client.close())
  return c
}

const headersOf = (sessionId: string) => ({ 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' })

describe('MCP answers as the spec words them', () => {
  it('answers an unknown or ended Mcp-Session-Id with 404 and -32001, so a client knows to initialize again', async () => {
    const { running } = await served()
    const unknown = await post(running.url, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }), headersOf('no-such-session'))
    expect(unknown.status).toBe(404)
    expect(jsonRpc(unknown.text).error).toMatchObject({ code: -32001, message: expect.stringContaining('Session not found') })

    const c = await connected(running.url)
    const id = c.transport.sessionId as string
    await c.transport.terminateSession()
    const ended = await post(running.url, JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }), headersOf(id))
    expect(ended.status).toBe(404)
    expect(jsonRpc(ended.text).error?.message).toContain('ended by the client')
    const get = await fetch(running.url, { headers: { accept: 'text/event-stream', ...headersOf(id) } })
    expect(get.status).toBe(404)
    await get.body?.cancel()
  })

  it('answers malformed JSON with HTTP 400 and the JSON-RPC parse error -32700, on a session and without one', async () => {
    const { running } = await served()
    const c = await connected(running.url)
    const onSession = await post(running.url, '{"jsonrpc": "2.0", "id": 4, "method": ', headersOf(c.transport.sessionId as string))
    expect(onSession.status).toBe(400)
    expect(jsonRpc(onSession.text)).toMatchObject({ id: null, error: { code: -32700, message: expect.stringContaining('Parse error') } })
    const fresh = await post(running.url, 'not json at all')
    expect(fresh.status).toBe(400)
    expect(jsonRpc(fresh.text).error?.code).toBe(-32700)
    // The session is unharmed.
    expect((await c.client.listTools()).tools).toHaveLength(10)
  })

  it('answers a call to an unknown tool with the protocol error -32602, and keeps invalid arguments a tool error the model can fix', async () => {
    const { running } = await served()
    const c = await connected(running.url)
    await expect(c.client.callTool({ name: 'shell', arguments: { commands: ['true'] } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown tool: "shell"; this server\'s tools are shell_run'),
      data: { tool: 'shell' },
    })
    const bad = await c.client.callTool({ name: 'shell_logs', arguments: { id: 'x', n: 0 } })
    expect(envelope(bad)).toMatchObject({ code: 'invalid_input', is_preflight: true })
  })

  it('lists the shell resource template, reads a shell through it, and answers an unknown resource with -32002', async () => {
    const { running } = await served()
    const c = await connected(running.url)
    const { resourceTemplates } = await c.client.listResourceTemplates()
    expect(resourceTemplates).toEqual([expect.objectContaining({ uriTemplate: 'hands://shells/{id}', name: 'shell', mimeType: 'text/plain' })])
    structured(await c.client.callTool({ name: 'shell_background', arguments: { commands: ['echo from the template'], id: 'tpl' } }))
    expect(
      await eventually(async () => {
        const read = await c.client.readResource({ uri: 'hands://shells/tpl' })
        return (read.contents[0] as { text: string }).text.includes('from the template')
      }),
    ).toBe(true)
    for (const uri of ['hands://shells/nope', 'hands://elsewhere', 'hands://shells/%E0%A4%A']) {
      await expect(c.client.readResource({ uri })).rejects.toMatchObject({ code: -32002, data: { uri } })
    }
  })

  it('serves the routing prose for the enabled tools as a prompt, with the code tool as its argument', async () => {
    const { running } = await served()
    const c = await connected(running.url)
    const { prompts } = await c.client.listPrompts()
    expect(prompts).toEqual([
      expect.objectContaining({
        name: 'hands_routing',
        description: expect.any(String),
        arguments: [expect.objectContaining({ name: 'code_tool', required: false })],
      }),
    ])
    const got = await c.client.getPrompt({ name: 'hands_routing', arguments: { code_tool: 'js_exec' } })
    const text = (got.messages[0]!.content as { text: string }).text
    for (const tool of ['shell_background', 'shell_logs', 'shell_run', 'copy', 'move', 'delete', 'create_directory', 'file_exists'])
      expect(text).toContain(`\`${tool}\``)
    expect(text).toContain('inside `js_exec`')
    expect(text).toContain('## js_exec description')
    const byDefault = await c.client.getPrompt({ name: 'hands_routing' })
    expect((byDefault.messages[0]!.content as { text: string }).text).toContain('`python_execution`')
    const none = (await c.client.getPrompt({ name: 'hands_routing', arguments: { code_tool: 'none' } })).messages[0]!.content as { text: string }
    expect(none.text).toContain('then poll `shell_logs`; no tool waits for you.')
    expect(none.text).not.toMatch(/python_execution|none|description\n/)
    await expect(c.client.getPrompt({ name: 'nope' })).rejects.toMatchObject({ code: -32602 })
    await expect(c.client.getPrompt({ name: 'hands_routing', arguments: { code_tool: 'a b`' } })).rejects.toMatchObject({ code: -32602 })

    const noShell = await served({ toggles: { shell: false } })
    const d = await connected(noShell.running.url)
    const fsOnly = (await d.client.getPrompt({ name: 'hands_routing' })).messages[0]?.content as { text: string }
    expect(fsOnly.text).toContain('`file_exists` change and probe the filesystem.')
    expect(fsOnly.text).not.toContain('shell_')
  })

  it('sends its notices to the client log at the level the client set (logging/setLevel)', async () => {
    const { running } = await served()
    const c = await connected(running.url)
    const notices: Array<{ level: string; data: unknown }> = []
    c.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      notices.push({ level: n.params.level, data: n.params.data })
    })
    await c.client.setLoggingLevel('warning')
    expect(envelope(await c.client.callTool({ name: 'copy', arguments: { src: '../../etc/passwd', dest: 'x' } }))).toMatchObject({ code: 'outside_roots' })
    expect(await eventually(() => notices.length > 0)).toBe(true)
    expect(notices[0]).toMatchObject({ level: 'warning', data: expect.stringContaining('copy refused (outside_roots)') })
    await c.client.setLoggingLevel('error')
    const before = notices.length
    envelope(await c.client.callTool({ name: 'copy', arguments: { src: '../../etc/passwd', dest: 'y' } }))
    await new Promise((r) => setTimeout(r, 500))
    expect(notices).toHaveLength(before)
  })

  it('annotates copy and move as destructive (is_overwrite may replace files) and file_exists as read-only', async () => {
    const { running } = await served()
    const c = await connected(running.url)
    const { tools } = await c.client.listTools()
    const hint = (name: string) => tools.find((t) => t.name === name)?.annotations
    expect(hint('copy')).toMatchObject({ destructiveHint: true, readOnlyHint: false })
    expect(hint('move')).toMatchObject({ destructiveHint: true, readOnlyHint: false })
    expect(hint('delete')).toMatchObject({ destructiveHint: true })
    expect(hint('create_directory')).toMatchObject({ destructiveHint: false })
    expect(hint('file_exists')).toMatchObject({ readOnlyHint: true, destructiveHint: false })
  })

  it('reports an elicitation answer as what it was: accept with confirm false, accept without content, decline, cancel', async () => {
    const { running, root } = await served()
    const c = await connected(running.url, { elicitation: {} })
    let answer: Record<string, unknown> = {}
    c.client.setRequestHandler(ElicitRequestSchema, () => answer as never)
    mkdirSync(join(root, 'keep'))
    writeFileSync(join(root, 'keep', 'f'), 'x')
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ action: 'accept', content: { confirm: false } }, 'the user accepted the form but left `confirm` false'],
      [{ action: 'accept' }, 'the client accepted the form without a `confirm` answer'],
      [{ action: 'decline' }, 'the user declined'],
      [{ action: 'cancel' }, 'the user dismissed the confirmation without answering'],
    ]
    for (const [given, said] of cases) {
      answer = given
      const e = envelope(await c.client.callTool({ name: 'delete', arguments: { paths: ['keep'] } }))
      expect(e, JSON.stringify(given)).toMatchObject({ code: 'not_confirmed', is_preflight: true })
      expect(e['message']).toBe(`Not confirmed to delete "keep": ${said}; delete changed nothing.`)
      expect(e['message']).not.toContain('The host declined')
      expect(existsSync(join(root, 'keep', 'f'))).toBe(true)
    }
    answer = { action: 'accept', content: { confirm: true } }
    expect(structured(await c.client.callTool({ name: 'delete', arguments: { paths: ['keep'] } }))).toEqual({ paths: [{ path: 'keep', is_deleted: true }] })
  })

  it('starts no session for a request that is not an initialize', async () => {
    const { running } = await served()
    const r = await post(running.url, JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }))
    expect(r.status).toBe(400)
    expect(jsonRpc(r.text)).toMatchObject({ id: 9, error: { code: -32000, message: expect.stringContaining('initialize') } })
    expect(running.sessions()).toEqual([])
    const ok = await post(running.url, JSON.stringify(INITIALIZE))
    expect(ok.status).toBe(200)
    expect(running.sessions()).toHaveLength(1)
  })
})
