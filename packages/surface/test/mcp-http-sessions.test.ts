import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { structured } from './helpers/mcp.ts'
import { eventually, isAlive } from './helpers/procs.ts'
import { INITIALIZE, countingHome, httpClient, jsonRpc, leftovers, nothingLeft, post, serveHttpProcess, serverCgroup } from './helpers/serve.ts'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.()
})

type Opened = Awaited<ReturnType<typeof httpClient>>

/** Run `make` for 0..n-1, `width` at a time. */
async function inBatches<T>(n: number, width: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = []
  for (let i = 0; i < n; i += width) out.push(...(await Promise.all(Array.from({ length: Math.min(width, n - i) }, (_, k) => make(i + k)))))
  return out
}

describe('hands serve --http: sessions that end', () => {
  it('expires 50 abandoned sessions after --session-idle-ms, leaving no process, cgroup or spool folder, and answers their ids with 404', async () => {
    const s = await serveHttpProcess(['--session-idle-ms', '3000', '--max-sessions', '64'])
    cleanups.push(() => s.stop())
    const cgroup = serverCgroup(s.pid)

    // A client that keeps talking is not idle, however long the others are gone.
    const kept = await httpClient(s.url)
    cleanups.push(() => kept.client.close())
    const keptShell = structured<{ pid: number }>(await kept.client.callTool({ name: 'shell_background', arguments: { commands: ['sleep 600'], id: 'kept' } }))
    const one = leftovers(s, cgroup)
    expect(one.spools).toHaveLength(1)
    if (cgroup !== null) expect(one.cgroups).toHaveLength(1)
    expect(one.processes.map((p) => p.cmd).join('\n')).toContain('hands-reaper')
    expect(one.processes.map((p) => p.pid)).toContain(keptShell.pid)
    let talking = true
    const talk = (async () => {
      while (talking) {
        await kept.client.ping()
        await new Promise((r) => setTimeout(r, 300))
      }
    })()

    // Each abandoned client starts a background `sleep 600` (as the Inspector did) and leaves without DELETE.
    let most = 0
    const sampler = setInterval(() => {
      most = Math.max(most, leftovers(s, cgroup).spools.length)
    }, 100)
    const abandoned = await inBatches(50, 10, async () => {
      const c: Opened = await httpClient(s.url)
      const bg = structured<{ pid: number }>(await c.client.callTool({ name: 'shell_background', arguments: { commands: ['sleep 600'], id: 'sl' } }))
      const id = c.transport.sessionId as string
      await c.client.close()
      return { id, pid: bg.pid }
    })
    clearInterval(sampler)
    expect(new Set(abandoned.map((a) => a.id)).size).toBe(50)
    expect(most).toBeGreaterThanOrEqual(10)

    expect(await eventually(() => abandoned.every((a) => !isAlive(a.pid)), 60_000)).toBe(true)
    // Only the session that kept talking holds anything now: its own cgroup, spool folder and
    // shell (the shell's first process and what runs in its cgroup), its ruleset keeper (named by
    // its spool folder), and the server's one reaper and one spawner.
    const inCgroup = (pid: number, name: string | undefined) => {
      try {
        return name !== undefined && readFileSync(`/proc/${pid}/cgroup`, 'latin1').includes(`/${name}/`)
      } catch {
        return false
      }
    }
    const itsOwn = (left: ReturnType<typeof leftovers>) =>
      left.processes.every(
        (p) =>
          p.pid === keptShell.pid ||
          inCgroup(p.pid, left.cgroups[0]) ||
          p.cmd.includes(`hands-reaper hands-${s.pid}`) ||
          p.cmd.includes('hands-confine --spawner') ||
          p.cmd.includes(`/${left.spools[0]}/`),
      )
    expect(
      await eventually(() => {
        const left = leftovers(s, cgroup)
        return left.spools.length === 1 && (cgroup === null || left.cgroups.length === 1) && itsOwn(left)
      }, 120_000),
      JSON.stringify(leftovers(s, cgroup)),
    ).toBe(true)
    expect(isAlive(keptShell.pid)).toBe(true)

    const stale = await post(s.url, JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }), {
      'mcp-session-id': abandoned[0]?.id as string,
      'mcp-protocol-version': '2025-06-18',
    })
    expect(stale.status).toBe(404)
    expect(jsonRpc(stale.text).error).toMatchObject({ code: -32001, message: expect.stringContaining('expired') })
    expect(s.stderr()).toContain('had no request for 3000 ms and expired')

    talking = false
    await talk
    await kept.transport.terminateSession()
    await kept.client.close()
    expect(await eventually(() => !isAlive(keptShell.pid))).toBe(true)
    const left = await nothingLeft(s, cgroup)
    expect(left).toEqual({ cgroups: [], spools: [], processes: [] })
  }, 360_000)

  it('refuses the 33rd session with 503 and a JSON-RPC error saying why, and keeps the first 32 working', async () => {
    const s = await serveHttpProcess()
    cleanups.push(() => s.stop())
    const clients = await inBatches(32, 8, () => httpClient(s.url))
    cleanups.push(() => Promise.all(clients.map((c) => c.client.close())))

    const refused = await post(s.url, JSON.stringify({ ...INITIALIZE, id: 'the-33rd' }))
    expect(refused.status).toBe(503)
    const answer = jsonRpc(refused.text)
    expect(answer.id).toBe('the-33rd')
    expect(answer.error?.code).toBe(-32000)
    expect(answer.error?.message).toContain('already has 32 sessions open')
    expect(answer.error?.message).toContain('every one of them is busy')
    expect(answer.error?.message).toContain('--max-sessions')

    for (const c of clients) {
      expect(structured(await c.client.callTool({ name: 'file_exists', arguments: { paths: ['.'] } }))).toEqual({ paths: [{ path: '.', is_exists: true }] })
    }
    const run = structured<{ commands: Array<{ stdout: string }> }>(
      await clients[31]!.client.callTool({ name: 'shell_run', arguments: { commands: ['echo still here'] } }),
    )
    expect(run.commands[0]?.stdout).toBe('still here\n')

    // Ending one frees its place.
    await clients[0]!.transport.terminateSession()
    const next = await httpClient(s.url)
    cleanups.push(() => next.client.close())
    expect(structured(await next.client.callTool({ name: 'file_exists', arguments: { paths: ['.'] } }))).toEqual({ paths: [{ path: '.', is_exists: true }] })
  }, 240_000)

  it('at the cap, closes the least recently used idle session that runs no shell to admit a new one, and answers 503 only when none is', async () => {
    const s = await serveHttpProcess(['--max-sessions', '3', '--evict-idle-ms', '4000'])
    cleanups.push(() => s.stop())
    // Clients that leave without DELETE (as the Inspector CLI does): the oldest, one that left a shell running, and one that left just now.
    const oldest = await httpClient(s.url)
    await oldest.client.close()
    const busy = await httpClient(s.url)
    const shell = structured<{ pid: number }>(await busy.client.callTool({ name: 'shell_background', arguments: { commands: ['sleep 600'], id: 'kept' } }))
    await busy.client.close()
    await new Promise((r) => setTimeout(r, 4100))
    const recent = await httpClient(s.url)
    await recent.client.ping()
    await recent.client.close()

    const next = await httpClient(s.url)
    cleanups.push(() => next.client.close())
    expect(structured(await next.client.callTool({ name: 'file_exists', arguments: { paths: ['.'] } }))).toEqual({ paths: [{ path: '.', is_exists: true }] })
    expect(s.stderr()).toContain(`session ${oldest.transport.sessionId} was closed to admit a new one`)
    const gone = await post(s.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), {
      'mcp-session-id': oldest.transport.sessionId as string,
      'mcp-protocol-version': '2025-06-18',
    })
    expect(gone.status).toBe(404)
    expect(jsonRpc(gone.text).error?.message).toContain('the least recently used, idle for')
    // The session with a running shell kept it; the recent one is still open.
    expect(isAlive(shell.pid)).toBe(true)
    const stillOpen = await post(s.url, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }), {
      'mcp-session-id': recent.transport.sessionId as string,
      'mcp-protocol-version': '2025-06-18',
    })
    expect(jsonRpc(stillOpen.text).result).toEqual({})

    // Now every session is busy or recent: 503, saying so.
    const refused = await post(s.url, JSON.stringify({ ...INITIALIZE, id: 'one-more' }))
    expect(refused.status).toBe(503)
    expect(jsonRpc(refused.text).error?.message).toContain('every one of them is busy (a request open or a shell running) or was used in the last 4 s')
  }, 120_000)

  it('runs the login shell once for a server with 20 sessions, every one of which sees its environment', async () => {
    const home = countingHome()
    cleanups.push(home.remove)
    // The profile counts its runs in HOME, which confined commands may write only when allowed.
    const s = await serveHttpProcess(['--allow-write', home.home], { HOME: home.home })
    cleanups.push(() => s.stop())
    const clients = await inBatches(20, 5, () => httpClient(s.url))
    cleanups.push(() => Promise.all(clients.map((c) => c.client.close())))
    const homes = await Promise.all(
      clients.map(async (c) =>
        structured<{ commands: Array<{ stdout: string }> }>(await c.client.callTool({ name: 'shell_run', arguments: { commands: ['echo "$HOME"'] } })),
      ),
    )
    for (const r of homes) expect(r.commands[0]?.stdout).toBe(`${home.home}\n`)
    expect(home.count()).toBe(1)
  }, 240_000)
})
