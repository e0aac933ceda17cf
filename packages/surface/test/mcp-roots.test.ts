import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { connectAs, envelope, structured } from './helpers/mcp.ts'
import { eventually, isAlive, processesMentioning } from './helpers/procs.ts'
import { tempRoot } from './helpers/tmp.ts'

type Connected = Awaited<ReturnType<typeof connectAs>>

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.()
})

/** A fresh directory, removed after the test. */
function dir(prefix = 'hands-roots-'): string {
  const t = tempRoot(prefix)
  cleanups.push(t.remove)
  return t.dir
}

const uri = (path: string) => ({ uri: pathToFileURL(path).href, name: path })

async function connect(args: string[], options: Parameters<typeof connectAs>[1] = {}): Promise<Connected> {
  const c = await connectAs(args, options)
  cleanups.push(async () => {
    const pid = c.transport.pid
    await c.client.close().catch(() => {})
    if (pid !== null) await eventually(() => !isAlive(pid))
  })
  return c
}

const run = async (c: Connected, commands: string[]) =>
  structured<{ cwd: string; commands: Array<{ stdout: string; stderr: string; exit: number }> }>(
    await c.client.callTool({ name: 'shell_run', arguments: { commands } }),
  )

const count = (text: string, part: string) => text.split(part).length - 1

describe('hands serve over stdio with a client that offers roots (the MCP roots capability)', () => {
  it('serves the client roots, the first as the workspace, and moves new calls to the roots a list_changed brings', async () => {
    const started = dir()
    const [a, b, c2] = [dir(), dir(), dir()]
    writeFileSync(join(a, 'in-a'), '')
    const c = await connect([], { cwd: started, offer: { roots: [uri(a), uri(b)] } })

    expect(structured(await c.client.callTool({ name: 'file_exists', arguments: { paths: ['in-a'] } }))).toEqual({ paths: [{ path: 'in-a', is_exists: true }] })
    expect((await run(c, ['pwd'])).cwd).toBe(a)
    expect(structured(await c.client.callTool({ name: 'create_directory', arguments: { paths: [join(b, 'made')] } }))).toMatchObject({
      paths: [{ is_created: true }],
    })
    // The directory the server was started in is not a root once the client gave its own.
    expect(envelope(await c.client.callTool({ name: 'file_exists', arguments: { paths: [started] } }))).toMatchObject({ code: 'outside_roots' })

    await c.setRoots([uri(c2)])
    // The call after the notification waits for the new roots.
    expect((await run(c, ['pwd'])).cwd).toBe(c2)
    expect(envelope(await c.client.callTool({ name: 'file_exists', arguments: { paths: [join(a, 'in-a')] } }))).toMatchObject({ code: 'outside_roots' })
    expect(c.notices.join('\n')).toContain(`roots: ${c2} (from the client)`)
  }, 120_000)

  it('with --root, takes only the client roots inside it and names each one it refused in a log notice', async () => {
    const host = dir()
    const inside = join(host, 'project')
    mkdirSync(inside)
    const outside = dir()
    const c = await connect(['--root', host], { offer: { roots: [uri(outside), uri(inside)] } })
    expect((await run(c, ['pwd'])).cwd).toBe(inside)
    expect(c.notices).toContain(`refused 1 of the client's roots: ${outside}: outside the host's roots (${host})`)
    expect(envelope(await c.client.callTool({ name: 'file_exists', arguments: { paths: [outside] } }))).toMatchObject({ code: 'outside_roots' })

    // None acceptable: the host's roots again.
    await c.setRoots([uri(outside)])
    expect((await run(c, ['pwd'])).cwd).toBe(host)
  }, 120_000)

  it('keeps a background shell started under the old roots running and reachable; new commands, and new shells, get the new roots', async () => {
    const [a, b] = [dir(), dir()]
    const c = await connect([], { offer: { roots: [uri(a)] } })
    const old = structured<{ id: string; pid: number }>(
      await c.client.callTool({ name: 'shell_background', arguments: { commands: ['while true; do date > tick; sleep 0.2; done'] } }),
    )
    expect(old.id).toBe('while')
    const sleeper = structured<{ id: string; pid: number }>(await c.client.callTool({ name: 'shell_background', arguments: { commands: ['sleep 600'] } }))
    expect(sleeper.id).toBe('sleep')

    await c.setRoots([uri(b)])
    expect((await run(c, ['pwd'])).cwd).toBe(b)
    expect(c.notices.join('\n')).toContain('keep running under them until stopped: while, sleep')
    // The old shell still writes under its roots; a new command may not.
    const tick = join(a, 'tick')
    const denied = await run(c, [`echo x > ${tick}`])
    expect(denied.commands[0]?.exit).not.toBe(0)
    expect(await eventually(() => isAlive(old.pid))).toBe(true)
    expect(structured<{ status: string }>(await c.client.callTool({ name: 'shell_logs', arguments: { id: 'while' } })).status).toBe('running')

    // The same script again answers with the live shell; another `sleep` gets an id of its own, under the new roots.
    expect(structured(await c.client.callTool({ name: 'shell_background', arguments: { commands: ['sleep 600'], cwd: a } }))).toMatchObject({
      id: 'sleep',
      is_already_running: true,
    })
    expect(envelope(await c.client.callTool({ name: 'shell_background', arguments: { commands: ['sleep 601'], cwd: a } }))).toMatchObject({
      code: 'outside_roots',
    })
    expect(structured(await c.client.callTool({ name: 'shell_background', arguments: { commands: ['sleep 600'], id: 'sleep' } }))).toMatchObject({
      id: 'sleep',
      pid: sleeper.pid,
      is_already_running: true,
    })
    const again = structured<{ id: string; cwd: string; is_already_running: boolean }>(
      await c.client.callTool({ name: 'shell_background', arguments: { commands: ['sleep 600'] } }),
    )
    expect(again).toMatchObject({ id: 'sleep-2', cwd: b, is_already_running: false })
    const { resources } = await c.client.listResources()
    expect(resources.map((r) => r.uri)).toEqual(['hands://shells', 'hands://shells/while', 'hands://shells/sleep', 'hands://shells/sleep-2'])
    expect(envelope(await c.client.callTool({ name: 'shell_logs', arguments: { id: 'nope' } }))).toMatchObject({
      code: 'unknown_id',
      hint: 'Live ids: `while`, `sleep`, `sleep-2`.',
    })

    for (const id of ['while', 'sleep', 'sleep-2']) {
      expect(structured<{ status: string }>(await c.client.callTool({ name: 'shell_stop', arguments: { id } })).status).toBe('stopped')
    }
    expect(isAlive(old.pid) || isAlive(sleeper.pid)).toBe(false)
    // With its last shell gone, the old roots' runtime is released: nothing of it names them any more (its ruleset keeper did).
    expect(await eventually(() => processesMentioning(a).length === 0), JSON.stringify(processesMentioning(a))).toBe(true)
    const pid = c.transport.pid as number
    await c.client.close()
    expect(await eventually(() => !isAlive(pid) && processesMentioning(b).length === 0), JSON.stringify(processesMentioning(b))).toBe(true)
  }, 180_000)
})

describe('hands serve started in / or the home directory without --root', () => {
  it('in /, with a client that offers no roots: answers, refuses every tool call with a hint, and says so on stderr once', async () => {
    const c = await connect([], { cwd: '/' })
    expect((await c.client.listTools()).tools).toHaveLength(10)
    for (const [name, args] of [
      ['file_exists', { paths: ['etc/hostname'] }],
      ['shell_run', { commands: ['pwd'] }],
    ] as const) {
      const e = envelope(await c.client.callTool({ name, arguments: args }))
      expect(e).toMatchObject({ code: 'outside_roots', is_preflight: true })
      expect(e['hint']).toContain('--root DIR')
      expect(e['hint']).toContain('client that offers roots')
    }
    expect(await eventually(() => c.notices.some((n) => n.startsWith('this session has no root')))).toBe(true)
    expect(count(c.stderr(), 'without --root')).toBe(1)
    expect(c.stderr()).toContain('roots none')
  }, 120_000)

  it('in the home directory, with a client that offers roots: serves them', async () => {
    const home = dir('hands-home-')
    const project = dir()
    const c = await connect([], { cwd: home, env: { HOME: home }, offer: { roots: [uri(project)] } })
    expect((await run(c, ['pwd'])).cwd).toBe(project)
    expect(count(c.stderr(), 'without --root')).toBe(1)
    expect(c.stderr()).toContain(`started in ${home} (your home directory) without --root`)
  }, 120_000)

  it('serves --root / when it is given on purpose, with one warning', async () => {
    const c = await connect(['--root', '/'], { cwd: '/' })
    expect(structured(await c.client.callTool({ name: 'file_exists', arguments: { paths: ['/etc/hostname'] } }))).toEqual({
      paths: [{ path: '/etc/hostname', is_exists: true }],
    })
    expect(count(c.stderr(), 'warning: --root / (the whole filesystem)')).toBe(1)
    expect(c.stderr()).not.toContain('without --root')
  }, 120_000)
})
