import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ElicitRequestSchema, ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it } from 'vitest'
import { TOOL_NAMES } from '@hands/contracts'
import { connectStdio, envelope, structured } from './helpers/mcp.ts'
import { eventually, isAlive, processesMentioning } from './helpers/procs.ts'
import { tempRoot } from './helpers/tmp.ts'

type Connected = Awaited<ReturnType<typeof connectStdio>>

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.()
})

async function open(args: string[], env: Record<string, string> = {}, capabilities: Record<string, unknown> = {}) {
  const root = tempRoot()
  const c = await connectStdio(['--root', root.dir, ...args], env, capabilities)
  cleanups.push(root.remove)
  cleanups.push(async () => {
    await c.client.close().catch(() => {})
  })
  return { ...c, root: root.dir }
}

/** Close the client and prove the server and everything it started are gone. */
async function closeAndProveGone(c: Connected & { root: string }) {
  const serverPid = c.transport.pid
  await c.client.close()
  expect(await eventually(() => serverPid === null || !isAlive(serverPid))).toBe(true)
  expect(await eventually(() => processesMentioning(c.root).length === 0), JSON.stringify(processesMentioning(c.root))).toBe(true)
}

describe('hands serve over stdio, driven by the MCP SDK client', () => {
  it('lists the ten tools with input schema, output schema and annotations', async () => {
    const c = await open([])
    const { tools } = await c.client.listTools()
    expect(tools.map((t) => t.name)).toEqual(TOOL_NAMES)
    for (const t of tools) {
      expect(t.inputSchema).toMatchObject({ type: 'object', additionalProperties: false })
      expect(t.outputSchema).toMatchObject({ type: 'object' })
      expect(t.annotations).toHaveProperty('destructiveHint')
    }
    await closeAndProveGone(c)
  })

  it('runs every fs tool end to end, with results the client validated against the output schema', async () => {
    const c = await open([])
    await c.client.listTools()
    expect(structured(await c.client.callTool({ name: 'create_directory', arguments: { paths: ['a/b', 'a'] } }))).toEqual({
      paths: [
        { path: 'a/b', is_created: true },
        { path: 'a', is_created: false },
      ],
    })
    writeFileSync(join(c.root, 'a', 'b', 'f.txt'), 'hello')
    expect(structured(await c.client.callTool({ name: 'file_exists', arguments: { paths: ['a/b/f.txt', 'nope'] } }))).toEqual({
      paths: [
        { path: 'a/b/f.txt', is_exists: true },
        { path: 'nope', is_exists: false },
      ],
    })
    expect(structured(await c.client.callTool({ name: 'copy', arguments: { src: 'a/b/f.txt', dest: 'c.txt' } }))).toEqual({ src: 'a/b/f.txt', dest: 'c.txt' })
    expect(readFileSync(join(c.root, 'c.txt'), 'utf8')).toBe('hello')
    expect(envelope(await c.client.callTool({ name: 'copy', arguments: { src: 'a/b/f.txt', dest: 'c.txt' } }))).toMatchObject({
      tool: 'copy',
      code: 'destination_exists',
      is_preflight: true,
    })
    expect(structured(await c.client.callTool({ name: 'move', arguments: { src: 'c.txt', dest: 'd/c.txt' } }))).toEqual({ src: 'c.txt', dest: 'd/c.txt' })
    expect(existsSync(join(c.root, 'c.txt'))).toBe(false)
    const del = await c.client.callTool({ name: 'delete', arguments: { paths: ['d', 'missing'] } })
    expect(structured(del)).toEqual({
      paths: [
        { path: 'd', is_deleted: true },
        { path: 'missing', is_deleted: false },
      ],
    })
    expect((del.content as Array<{ text: string }>)[0]?.text).toBe('deleted d\nmissing missing')
    await closeAndProveGone(c)
  }, 120_000)

  it('runs a background http.server, polls it with shell_logs until it serves, fetches it with shell_run and curl, and stops it for good', async () => {
    const c = await open([])
    await c.client.listTools()
    let listChanged = 0
    c.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      listChanged++
    })
    writeFileSync(join(c.root, 'index.html'), 'served by hands\n')
    const bg = structured<{ id: string; pid: number; status: string }>(
      await c.client.callTool({ name: 'shell_background', arguments: { commands: ['python3 -m http.server 0 --bind 127.0.0.1'], id: 'web' } }),
    )
    expect(bg).toMatchObject({ id: 'web', status: 'running' })

    let port: number | null = null
    for (let i = 0; i < 200 && port === null; i++) {
      const logs = structured<{ lines: string[] }>(await c.client.callTool({ name: 'shell_logs', arguments: { id: 'web' } }))
      const hit = logs.lines.map((l) => /port (\d+)/.exec(l)).find((m) => m !== null)
      if (hit) port = Number(hit[1])
      else await new Promise((r) => setTimeout(r, 100))
    }
    expect(port).not.toBeNull()

    const fetched = structured<{ commands: Array<{ stdout: string; exit: number }> }>(
      await c.client.callTool({ name: 'shell_run', arguments: { commands: [`curl -s http://127.0.0.1:${port}/index.html`] } }),
    )
    expect(fetched.commands[0]).toMatchObject({ stdout: 'served by hands\n', exit: 0 })

    const { resources } = await c.client.listResources()
    expect(resources.map((r) => r.uri)).toEqual(['hands://shells', 'hands://shells/web'])
    const read = await c.client.readResource({ uri: 'hands://shells/web' })
    expect((read.contents[0] as { text: string }).text).toContain(`port ${port}`)
    expect(await eventually(() => listChanged > 0)).toBe(true)

    const stopped = structured<{ status: string }>(await c.client.callTool({ name: 'shell_stop', arguments: { id: 'web' } }))
    expect(stopped.status).toBe('stopped')
    expect(isAlive(bg.pid)).toBe(false)
    const after = structured<{ commands: Array<{ exit: number }> }>(
      await c.client.callTool({ name: 'shell_run', arguments: { commands: [`curl -s --max-time 2 http://127.0.0.1:${port}/`] } }),
    )
    expect(after.commands[0]?.exit).not.toBe(0)
    expect(envelope(await c.client.callTool({ name: 'shell_logs', arguments: { id: 'web' } }))).toMatchObject({ code: 'unknown_id' })
    await closeAndProveGone(c)
  }, 180_000)

  it('types into a Python REPL and reads the answer', async () => {
    const c = await open([])
    await c.client.listTools()
    structured(await c.client.callTool({ name: 'shell_background', arguments: { commands: ['python3 -i -q'], id: 'py' } }))
    expect(structured(await c.client.callTool({ name: 'shell_type', arguments: { id: 'py', text: 'print(6 * 7)' } }))).toEqual({
      id: 'py',
      text: 'print(6 * 7)',
      is_enter: true,
      status: 'running',
    })
    const seen = await eventually(async () => {
      const logs = structured<{ lines: string[] }>(await c.client.callTool({ name: 'shell_logs', arguments: { id: 'py' } }))
      return logs.lines.includes('42')
    })
    expect(seen).toBe(true)
    await closeAndProveGone(c)
  }, 120_000)

  it('returns the error envelope for every kind of failure, with isError and no structured content', async () => {
    const c = await open([])
    await c.client.listTools()
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['shell_logs', { id: 'dev', n: 0 }, 'invalid_input'],
      ['shell_logs', { id: 'nope' }, 'unknown_id'],
      ['copy', { src: '../../etc/passwd', dest: 'x' }, 'outside_roots'],
      ['copy', { src: 'absent.txt', dest: 'x' }, 'not_found'],
      ['shell_run', { commands: ['true'], cwd: '/' }, 'outside_roots'],
    ]
    for (const [name, args, code] of cases) {
      const r = await c.client.callTool({ name, arguments: args })
      expect(r.isError, name).toBe(true)
      expect(r.structuredContent, name).toBeUndefined()
      const e = envelope(r)
      expect(e, `${name} ${JSON.stringify(args)}`).toMatchObject({ tool: name, code })
      expect(typeof e['hint']).toBe('string')
      expect((r.content as Array<{ text: string }>)[0]?.text.startsWith(`${code}: `)).toBe(true)
    }
    const invalid = envelope(await c.client.callTool({ name: 'shell_logs', arguments: { id: 'dev', n: 0 } }))
    expect(invalid['message']).toContain('`n`')
    expect(invalid['is_preflight']).toBe(true)

    structured(await c.client.callTool({ name: 'shell_background', arguments: { commands: ['echo done'], id: 'quick' } }))
    expect(
      await eventually(
        async () => structured<{ status: string }>(await c.client.callTool({ name: 'shell_logs', arguments: { id: 'quick' } })).status === 'exited',
      ),
    ).toBe(true)
    expect(envelope(await c.client.callTool({ name: 'shell_type', arguments: { id: 'quick', text: 'x' } }))).toMatchObject({ code: 'not_running' })
    await closeAndProveGone(c)
  }, 120_000)

  it('keeps host secrets out of commands unless --env-allow names them', async () => {
    const hidden = await open([], { MY_API_KEY: 'sekrit' })
    const r = structured<{ commands: Array<{ stdout: string }> }>(
      await hidden.client.callTool({ name: 'shell_run', arguments: { commands: ['echo "${MY_API_KEY:-unset}"'] } }),
    )
    expect(r.commands[0]?.stdout).toBe('unset\n')
    await closeAndProveGone(hidden)
    const allowed = await open(['--env-allow', 'MY_API_KEY'], { MY_API_KEY: 'sekrit' })
    const s = structured<{ commands: Array<{ stdout: string }> }>(
      await allowed.client.callTool({ name: 'shell_run', arguments: { commands: ['echo "${MY_API_KEY:-unset}"'] } }),
    )
    expect(s.commands[0]?.stdout).toBe('sekrit\n')
    await closeAndProveGone(allowed)
  }, 120_000)

  it("keeps the environment of the server and of its pnpm and sh ancestors out of every command's reach; says so at start", async () => {
    // Every ancestor of the command up to pid 1: the server, pnpm, the shells that started them.
    const readAncestors = 'p=$PPID; while [ "$p" -gt 1 ]; do tr "\\0" "\\n" < /proc/$p/environ 2>/dev/null; p=$(cut -d" " -f4 /proc/$p/stat); done; true'
    const c = await open([], { MY_API_KEY: 'sk-server-sekrit' })
    // The server says it once initialize is answered, so the line may come just after connect.
    await eventually(() => /hands: commands are confined by/.test(c.stderr()))
    expect(c.stderr()).toMatch(/hands: commands are confined by (Landlock|bubblewrap)/)
    const r = structured<{ commands: Array<{ stdout: string; note: string | null }> }>(
      await c.client.callTool({ name: 'shell_run', arguments: { commands: [readAncestors, 'tr "\\0" "\\n" < /proc/$PPID/environ'] } }),
    )
    expect(r.commands[0]?.stdout).not.toContain('sk-server-sekrit')
    expect(r.commands[1]?.stdout).toBe('')
    await closeAndProveGone(c)
    const off = await open(['--confine', 'off'], { MY_API_KEY: 'sk-server-sekrit' })
    await eventually(() => off.stderr().includes('hands: commands run'))
    expect(off.stderr()).toContain('hands: commands run UNCONFINED: the host switched confinement off')
    const o = structured<{ commands: Array<{ stdout: string; note: string | null }> }>(
      await off.client.callTool({ name: 'shell_run', arguments: { commands: [readAncestors] } }),
    )
    expect(o.commands[0]?.stdout).toContain('MY_API_KEY=sk-server-sekrit')
    expect(o.commands[0]?.note).toContain("read the server's environment")
    await closeAndProveGone(off)
  }, 120_000)

  it('answers a call to a tool it does not serve with the protocol error -32602, not a tool result', async () => {
    const c = await open([])
    await expect(c.client.callTool({ name: 'shell', arguments: { commands: ['true'] } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown tool: "shell"'),
    })
    await closeAndProveGone(c)
  })

  it('offers no shell tool with --no-shell and refuses a call to one as a protocol error naming the toggle', async () => {
    const c = await open(['--no-shell'])
    const { tools } = await c.client.listTools()
    expect(tools.map((t) => t.name)).toEqual(['copy', 'move', 'delete', 'create_directory', 'file_exists'])
    await expect(c.client.callTool({ name: 'shell_run', arguments: { commands: ['true'] } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('shell_run is switched off by the host (toggle `shell`)'),
    })
    await closeAndProveGone(c)
  })

  it('asks the client to confirm a delete through elicitation and keeps the file when the user declines', async () => {
    let answer: 'accept' | 'decline' = 'decline'
    const asked: string[] = []
    const c = await open([], {}, { elicitation: {} })
    c.client.setRequestHandler(ElicitRequestSchema, (req) => {
      asked.push(req.params.message)
      return answer === 'accept' ? { action: 'accept', content: { confirm: true } } : { action: 'decline' }
    })
    mkdirSync(join(c.root, 'keep'))
    expect(envelope(await c.client.callTool({ name: 'delete', arguments: { paths: ['keep'] } }))).toMatchObject({ code: 'not_confirmed', is_preflight: true })
    expect(existsSync(join(c.root, 'keep'))).toBe(true)
    answer = 'accept'
    expect(structured(await c.client.callTool({ name: 'delete', arguments: { paths: ['keep'] } }))).toEqual({ paths: [{ path: 'keep', is_deleted: true }] })
    expect(existsSync(join(c.root, 'keep'))).toBe(false)
    expect(asked).toHaveLength(2)
    expect(asked[0]).toContain('keep')
    await closeAndProveGone(c)
  })

  it('stops every shell and exits 0 when the client closes stdin', async () => {
    const c = await open([])
    const bg = structured<{ pid: number }>(await c.client.callTool({ name: 'shell_background', arguments: { commands: ['sleep 1000'], id: 'sleeper' } }))
    expect(isAlive(bg.pid)).toBe(true)
    const exited = new Promise<number | null>((resolve) => {
      // The SDK transport owns the child; its close event carries no code, so watch the pid.
      const pid = c.transport.pid
      const timer = setInterval(() => {
        if (pid === null || !isAlive(pid)) {
          clearInterval(timer)
          resolve(0)
        }
      }, 50)
    })
    await c.client.close()
    expect(await exited).toBe(0)
    expect(await eventually(() => !isAlive(bg.pid))).toBe(true)
    expect(await eventually(() => processesMentioning(c.root).length === 0)).toBe(true)
    expect(c.stderr()).toContain('stopping shells')
  })

  it('answers a message over the 10 MiB stdio limit with an error for that request and keeps serving, its shells alive', async () => {
    const c = await open([])
    const bg = structured<{ pid: number }>(await c.client.callTool({ name: 'shell_background', arguments: { commands: ['sleep 1000'], id: 'before' } }))
    const huge = 'x'.repeat(11 * 1024 * 1024)
    await expect(c.client.callTool({ name: 'shell_run', arguments: { commands: [`echo ${huge}`] } })).rejects.toMatchObject({
      code: -32600,
      message: expect.stringContaining("over this server's 10485760-byte limit for one stdio message"),
    })
    expect(isAlive(bg.pid)).toBe(true)
    const after = structured<{ commands: Array<{ stdout: string }> }>(
      await c.client.callTool({ name: 'shell_run', arguments: { commands: ['echo still serving'] } }),
    )
    expect(after.commands[0]?.stdout).toBe('still serving\n')
    // Just under the limit is read as usual.
    const near = 'y'.repeat(9 * 1024 * 1024)
    const big = structured<{ commands: Array<{ stdout: string }> }>(
      await c.client.callTool({ name: 'shell_run', arguments: { commands: [`echo ${near.length}`] } }),
    )
    expect(big.commands[0]?.stdout).toBe(`${near.length}\n`)
    expect(c.stderr()).toContain('dropped a stdio message of')
    await closeAndProveGone(c)
  }, 180_000)

  it('shows a person every path of a delete escaped, one per line, saying which are directories and how much they hold', async () => {
    const asked: string[] = []
    const c = await open([], {}, { elicitation: {} })
    c.client.setRequestHandler(ElicitRequestSchema, (req) => {
      asked.push(req.params.message)
      return { action: 'decline' }
    })
    const spoof = 'tmp.log\n\n(only this temporary log file is affected; nothing else is deleted)\u001b[2K\u001b[1A\u202e'
    writeFileSync(join(c.root, spoof), 'log\n')
    mkdirSync(join(c.root, 'important'))
    writeFileSync(join(c.root, 'important', 'data.db'), 'x'.repeat(5000))
    writeFileSync(join(c.root, 'important', 'notes'), 'y'.repeat(10))
    expect(envelope(await c.client.callTool({ name: 'delete', arguments: { paths: [spoof, 'important'] } }))).toMatchObject({ code: 'not_confirmed' })
    expect(existsSync(join(c.root, 'important', 'data.db'))).toBe(true)
    expect(existsSync(join(c.root, spoof))).toBe(true)

    const message = asked[0] as string
    expect(message).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u200b-\u200f]/)
    const lines = message.split('\n')
    expect(lines[0]).toBe('delete asks to delete 2 paths:')
    expect(lines[1]).toBe(
      `- "${c.root}/tmp.log\\n\\n(only this temporary log file is affected; nothing else is deleted)\\x1b[2K\\x1b[1A\\u{202e}": file, 4 bytes`,
    )
    expect(lines[2]).toBe(`- "${c.root}/important": directory holding 2 files, 5010 bytes (4.9 KiB)`)
    expect(lines[3]).toBe('Everything inside the directory goes too.')
    expect(lines).toHaveLength(4)
    await closeAndProveGone(c)
  })
})
