import { readFileSync } from 'node:fs'
import { request } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { connectStdio, structured } from './helpers/mcp.ts'
import { eventually } from './helpers/procs.ts'
import { INITIALIZE, httpClient, jsonRpc, leftovers, nothingLeft, post, serveHttpProcess, serverCgroup, type ServedHttp } from './helpers/serve.ts'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.()
})

async function started(args: string[] = [], listen?: string): Promise<ServedHttp & { cgroup: string | null }> {
  const s = await serveHttpProcess(args, {}, listen)
  cleanups.push(() => s.stop())
  const cgroup = serverCgroup(s.pid)
  // The login environment is captured once at start, in a short-lived runtime: wait until it is gone.
  await nothingLeft(s, cgroup)
  return { ...s, cgroup }
}

/** One raw request (node:http lets a test set Host and Origin as a browser or an attacker would). */
function raw(url: string, options: { method?: string; headers?: Record<string, string>; body?: string }): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'POST', headers: options.headers ?? {} }, (res) => {
      let text = ''
      res.on('data', (d: Buffer) => (text += d.toString()))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
    })
    req.on('error', reject)
    req.end(options.body)
  })
}

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const init = JSON.stringify(INITIALIZE)

/** Peak and current resident memory of a process, in bytes. */
function memory(pid: number): { peak: number; now: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024
  return { peak: kb('VmHWM'), now: kb('VmRSS') }
}

/** POST `total` bytes as a stream (never held whole), stopping as soon as the answer arrives. */
function streamPost(url: string, total: number, declare: boolean): Promise<{ status: number; text: string; sent: number }> {
  const chunk = Buffer.alloc(64 * 1024, 0x20)
  return new Promise((resolve, reject) => {
    let sent = 0
    let answered = false
    const headers: Record<string, string> = { ...JSON_HEADERS, ...(declare ? { 'content-length': String(total) } : {}) }
    const req = request(url, { method: 'POST', headers }, (res) => {
      answered = true
      let text = ''
      res.on('data', (d: Buffer) => (text += d.toString()))
      res.on('end', () => {
        req.destroy()
        resolve({ status: res.statusCode ?? 0, text, sent })
      })
    })
    req.on('error', (e) => (answered ? undefined : reject(e)))
    const pump = () => {
      while (!answered && sent < total) {
        sent += chunk.length
        if (!req.write(chunk)) return void req.once('drain', pump)
      }
      if (!answered) req.end()
    }
    req.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"')
    pump()
  })
}

describe('hands serve --http: the front door', () => {
  it('answers 200 text/plain initialize POSTs (CORS simple requests any web page can send) with 415 and leaves no process, cgroup or spool folder', async () => {
    const s = await started()
    let most = 0
    const sampler = setInterval(() => {
      const l = leftovers(s, s.cgroup)
      most = Math.max(most, l.spools.length + l.cgroups.length + l.processes.length)
    }, 20)
    const answers = new Map<number, number>()
    for (let i = 0; i < 200; i++) {
      const r = await raw(s.url, { headers: { 'content-type': 'text/plain', accept: 'application/json, text/event-stream' }, body: init })
      answers.set(r.status, (answers.get(r.status) ?? 0) + 1)
      if (i === 0) expect(jsonRpc(r.text).error?.message).toContain('Content-Type must be application/json')
    }
    clearInterval(sampler)
    expect([...answers]).toEqual([[415, 200]])
    expect(most).toBe(0)
    expect(leftovers(s, s.cgroup)).toEqual({ cgroups: [], spools: [], processes: [] })
  }, 240_000)

  it("starts an accepted session's shell runtime once it is initialized, and one that never calls a tool leaves nothing when it ends", async () => {
    const s = await started()
    const c = await httpClient(s.url)
    cleanups.push(() => c.client.close())
    // Ready before any tool call: its spool folder, cgroup, the reaper and the server's spawner.
    const prepared = await eventually(() => {
      const l = leftovers(s, s.cgroup)
      return l.spools.length === 1 && l.processes.some((p) => p.cmd.includes('hands-confine --spawner'))
    })
    expect(prepared, JSON.stringify(leftovers(s, s.cgroup))).toBe(true)
    const l = leftovers(s, s.cgroup)
    if (s.cgroup !== null) expect(l.cgroups).toHaveLength(1)
    expect(l.processes.map((p) => p.cmd).join('\n')).toContain('hands-reaper')
    await c.client.listResources()
    await c.transport.terminateSession()
    expect(await nothingLeft(s, s.cgroup)).toEqual({ cgroups: [], spools: [], processes: [] })
  }, 120_000)

  it('leaves nothing of sessions ended while their shell runtime is still starting', async () => {
    const s = await started()
    // Each session ends right after its initialize is answered: its runtime has just been made and
    // its spawner is starting (or, for a session whose DELETE came first, is never made).
    for (let i = 0; i < 20; i++) {
      const opened = await post(s.url, init)
      const id = opened.headers.get('mcp-session-id') as string
      expect(id).toBeTruthy()
      const ended = await fetch(s.url, { method: 'DELETE', headers: { 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' } })
      expect(ended.status).toBe(200)
    }
    expect(await nothingLeft(s, s.cgroup)).toEqual({ cgroups: [], spools: [], processes: [] })
  }, 240_000)

  it('refuses a foreign Origin with 403 before creating anything, and serves none, loopback and allowed ones', async () => {
    const s = await started(['--allow-host', 'hands.test'])
    const host = new URL(s.url).host
    const post = (origin?: string, hostHeader = host) =>
      raw(s.url, { headers: { ...JSON_HEADERS, host: hostHeader, ...(origin === undefined ? {} : { origin }) }, body: init })
    for (const origin of ['http://evil.example', 'https://attacker.test:8443', 'null', 'file:///etc/passwd']) {
      const r = await post(origin)
      expect(r.status, origin).toBe(403)
      expect(jsonRpc(r.text).error?.message).toContain('Origin')
    }
    expect(leftovers(s, s.cgroup)).toEqual({ cgroups: [], spools: [], processes: [] })
    for (const origin of [undefined, 'http://localhost:5173', 'http://127.0.0.1:3000', 'http://[::1]:8080', `http://hands.test:${new URL(s.url).port}`]) {
      expect((await post(origin)).status, String(origin)).toBe(200)
    }
    expect((await post(undefined, `hands.test:${new URL(s.url).port}`)).status).toBe(200)
    expect((await post(undefined, 'elsewhere.test')).status).toBe(403)
    const put = await raw(s.url, { method: 'PUT', headers: JSON_HEADERS, body: init })
    expect(put.status).toBe(405)
  }, 120_000)

  it('answers a 1 GB POST with 413 without buffering it, and the server stays small', async () => {
    const s = await started(['--max-body-bytes', String(1024 * 1024)])
    const before = memory(s.pid)
    for (const declare of [false, true]) {
      const r = await streamPost(s.url, 1024 * 1024 * 1024, declare)
      expect(r.status, `declared: ${declare}`).toBe(413)
      expect(jsonRpc(r.text).error?.message).toContain('over 1048576 bytes')
      // It stopped the client long before the gigabyte was sent.
      expect(r.sent).toBeLessThan(512 * 1024 * 1024)
    }
    const after = memory(s.pid)
    expect(after.peak - before.peak).toBeLessThan(96 * 1024 * 1024)
    // Still serving, on a fresh connection.
    const c = await httpClient(s.url)
    cleanups.push(() => c.client.close())
    expect((await c.client.listTools()).tools).toHaveLength(10)
  }, 240_000)

  it('serves on --http 127.0.0.2:PORT: the Host allowlist follows the bind address', async () => {
    const s = await started([], '127.0.0.2:0')
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.2:\d+\/mcp$/)
    const c = await httpClient(s.url)
    cleanups.push(() => c.client.close())
    expect((await c.client.listTools()).tools).toHaveLength(10)
    expect((await raw(s.url, { headers: { ...JSON_HEADERS, host: 'evil.example' }, body: init })).status).toBe(403)
  }, 120_000)

  it("refuses every request from a command of any hands server, confined or not, and serves the person's own client", async () => {
    const s = await started()
    const { client: own } = await httpClient(s.url)
    expect(structured<{ paths: unknown[] }>(await own.callTool({ name: 'file_exists', arguments: { paths: ['.'] } })).paths).toHaveLength(1)
    await own.close()
    // What a command tries: open a session and run a command in it, with Python's own HTTP client.
    const post = `import json, urllib.request, urllib.error
req = urllib.request.Request("${s.url}", data=json.dumps(${JSON.stringify(INITIALIZE)}).encode(), headers={"content-type": "application/json", "accept": "application/json, text/event-stream"})
try:
    r = urllib.request.urlopen(req, timeout=20); print(r.status, r.read()[:200])
except urllib.error.HTTPError as e:
    print(e.code, e.read()[:300])`
    const run = async (args: string[]) => {
      const other = await connectStdio(['--root', s.root, '--no-attach', ...args])
      try {
        const r = structured<{ commands: Array<{ stdout: string; stderr: string }> }>(
          await other.client.callTool({ name: 'shell_run', arguments: { commands: [`python3 - <<'EOF'\n${post}\nEOF`] } }),
        )
        return `${r.commands[0]?.stdout ?? ''}${r.commands[0]?.stderr ?? ''}`
      } finally {
        await other.client.close()
      }
    }
    for (const args of [[], ['--confine', 'off']]) {
      const out = await run(args)
      expect(out, args.join(' ')).toMatch(/^403 .*hands refuses this request: the process that connected \(pid \d+\) runs (inside a hands job|sandboxed)/)
    }
    expect(s.stderr()).not.toContain('hands: http request failed')
  }, 360_000)
})
