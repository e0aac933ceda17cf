/**
 * `pnpm bench mcp`: what the MCP server adds to a call. `shell_run(["true"])` and
 * `file_exists(["."])` round trips through the SDK client over stdio and Streamable HTTP (each
 * server a process of its own), side by side with the same calls on the library session and a
 * raw `bash -c true` spawn, interleaved call by call so load from elsewhere falls on every
 * series alike. Two more answerers tell the client's part from the server's: the same HTTP
 * session reached with a node:http client instead of the SDK's, and a bare node:http server
 * (fixtures/floor-mcp-http.mjs) that does only the call's own work behind the SDK client. The
 * CPU each call takes in this process and in the answering one shows what a 2-core machine
 * runs out of. Then the first `shell_run` of a new HTTP session, sent as soon as the client is
 * connected, against a later one (the session starts its shell runtime — spool folder, cgroup,
 * its registration with the server's one reaper, the first job's cgroup — in the background once
 * `initialize` is answered, so that first call finds it starting or ready), and the same after a
 * first `file_exists`, which tells the runtime's start from what any first call of a new session
 * costs. A later call
 * is timed twice: right after the one before (as the targets read), and after a 50 ms pause, as
 * a model's calls come; a raw spawn timed the same two ways shows what any spawn after a quiet
 * moment costs on this machine, so the second ratio is what the session's start itself costs.
 * The helper starts each job inside its cgroup (clone3 with CLONE_INTO_CGROUP), so no call waits
 * for the kernel's cgroup move; only on Linux < 5.7, where it writes itself into cgroup.procs
 * instead, does every first call and every call after a pause pay an RCU grace period (~10 ms).
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { lstat } from 'node:fs/promises'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { createSurface, shareLoginEnvironment } from '@hands/surface'
import { inTurn, median, rawSpawn, spread, timed } from './timings.ts'

const here = dirname(fileURLToPath(import.meta.url))
/** The server as it ships: the built bin on plain node (a server run through tsx is ~70 MB larger, and every spawn forks all of it). */
const BIN = join(here, '..', '..', 'packages', 'surface', 'dist', 'cli', 'main.js')
const NODE_ARGS = [BIN, 'serve']
if (!existsSync(BIN)) {
  console.error(`${BIN} is missing; run pnpm build first (pnpm bench does)`)
  process.exit(1)
}
const FLOOR = join(here, 'fixtures', 'floor-mcp-http.mjs')
/** Calls per series (BENCH_CALLS: fewer for a quick look at the first-call figures). */
const CALLS = Number(process.env['BENCH_CALLS'] ?? 300)
const WARMUP = 30
const NEW_SESSIONS = 30
/** The new sessions are measured in this many rounds (NEW_SESSIONS / ROUNDS each); each round gives its own first / later ratio. */
const ROUNDS = 6
/** The pause before each "after a pause" call: longer than the kernel's window between cgroup moves. */
const PAUSE_MS = 50

/** CPU time (ms) process `pid` has used so far, every thread of it (not its children): from schedstat, in ns. */
function cpuOf(pid: number): number {
  let ns = 0
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0])
    } catch {
      // the thread ended
    }
  }
  return ns / 1e6
}
const ownCpu = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

function report(what: string, figure: string, verdict = '') {
  console.log(`${what.padEnd(54)} ${figure.padEnd(30)} ${verdict}`)
}
const check = (ok: boolean, target: string) => `${ok ? 'ok' : 'MISSED'} (target ${target})`

async function httpServer(root: string): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [...NODE_ARGS, '--root', root, '--http', '127.0.0.1:0', '--max-sessions', String(NEW_SESSIONS + 8)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString()
      const m = /at (http:\/\/\S+\/mcp)/.exec(stderr)
      if (m) resolve(m[1] as string)
    })
    child.once('exit', () => reject(new Error(`the HTTP server exited: ${stderr}`)))
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  return {
    url,
    pid: child.pid as number,
    stop: async () => {
      child.kill('SIGTERM')
      await exited
    },
  }
}

/** The floor server (fixtures/floor-mcp-http.mjs): only the call's own work behind the SDK client. */
async function floorServer(): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [FLOOR], { stdio: ['pipe', 'pipe', 'inherit'] })
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.once('data', (d: Buffer) => resolve(d.toString().trim()))
    child.once('exit', () => reject(new Error('the floor server exited')))
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  return {
    url,
    pid: child.pid as number,
    stop: async () => {
      child.stdin.end()
      await exited
    },
  }
}

/**
 * `file_exists(["."])` over the same HTTP session with node:http and a keep-alive agent instead
 * of the SDK client: what the server and the loopback round trip cost, without the SDK client's
 * fetch, stream and schema work.
 */
function plainHttpCall(url: string, sessionId: string, tool: string, args: Record<string, unknown>): () => Promise<void> {
  const agent = new Agent({ keepAlive: true })
  const target = new URL(url)
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: args } })
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-session-id': sessionId,
    'mcp-protocol-version': '2025-06-18',
    'content-length': String(Buffer.byteLength(body)),
  }
  return () =>
    new Promise((resolve, reject) => {
      const req = request({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', agent, headers }, (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => {
          text += d
        })
        res.on('end', () =>
          text.includes('"result"') && !text.includes('"isError":true') ? resolve() : reject(new Error(`${tool} over plain HTTP failed: ${text}`)),
        )
      })
      req.once('error', reject)
      req.end(body)
    })
}

async function httpClient(url: string) {
  const transport = new StreamableHTTPClientTransport(new URL(url))
  const client = new Client({ name: 'hands-bench', version: '0' })
  await client.connect(transport)
  return { client, transport }
}

const root = realpathSync(mkdtempSync(join(tmpdir(), 'hands-bench-mcp-')))
/** What to stop when the benchmark ends, however it ends: no server outlives it. */
const stops: Array<() => Promise<unknown>> = []
try {
  const lib = createSurface(shareLoginEnvironment({ roots: [root] }))
  stops.push(() => lib.close())
  const stdio = new Client({ name: 'hands-bench', version: '0' })
  const stdioTransport = new StdioClientTransport({ command: process.execPath, args: [...NODE_ARGS, '--root', root], stderr: 'ignore' })
  await stdio.connect(stdioTransport)
  stops.push(() => stdio.close())
  const stdioPid = stdioTransport.pid as number
  const server = await httpServer(root)
  stops.push(server.stop)
  const http = await httpClient(server.url)
  const floor = await floorServer()
  stops.push(floor.stop)
  const floorHttp = await httpClient(floor.url)

  /** A series of calls; `server` is the pid of the process that answers them, when it is not this one. */
  type Series = { name: string; call: () => Promise<unknown>; server?: number; times: number[]; cpu: number[]; serverCpu: number[] }
  const run = (c: Client, tool: string, args: Record<string, unknown>) => async () => {
    const r = await c.callTool({ name: tool, arguments: args })
    if (r.isError) throw new Error(`${tool} failed: ${JSON.stringify(r.content)}`)
  }
  const libCall = (tool: 'shell_run' | 'file_exists', args: Record<string, unknown>) => async () => {
    const r = await lib.call(tool, args)
    if (!r.ok) throw new Error(`${tool} failed: ${JSON.stringify(r.error)}`)
  }
  const series: Series[] = [
    { name: 'raw spawn bash -c true', call: rawSpawn, times: [], cpu: [], serverCpu: [] },
    { name: 'library shell_run(["true"])', call: libCall('shell_run', { commands: ['true'] }), times: [], cpu: [], serverCpu: [] },
    { name: 'stdio shell_run(["true"])', call: run(stdio, 'shell_run', { commands: ['true'] }), server: stdioPid, times: [], cpu: [], serverCpu: [] },
    { name: 'http shell_run(["true"])', call: run(http.client, 'shell_run', { commands: ['true'] }), server: server.pid, times: [], cpu: [], serverCpu: [] },
    { name: 'library file_exists(["."])', call: libCall('file_exists', { paths: ['.'] }), times: [], cpu: [], serverCpu: [] },
    { name: 'stdio file_exists(["."])', call: run(stdio, 'file_exists', { paths: ['.'] }), server: stdioPid, times: [], cpu: [], serverCpu: [] },
    { name: 'http file_exists(["."])', call: run(http.client, 'file_exists', { paths: ['.'] }), server: server.pid, times: [], cpu: [], serverCpu: [] },
    { name: 'raw lstat(".")', call: () => lstat(root), times: [], cpu: [], serverCpu: [] },
    {
      name: 'floor http file_exists(["."])',
      call: run(floorHttp.client, 'file_exists', { paths: ['.'] }),
      server: floor.pid,
      times: [],
      cpu: [],
      serverCpu: [],
    },
    {
      name: 'http shell_run(["true"]), node:http client',
      call: plainHttpCall(server.url, http.transport.sessionId as string, 'shell_run', { commands: ['true'] }),
      server: server.pid,
      times: [],
      cpu: [],
      serverCpu: [],
    },
    {
      name: 'http file_exists(["."]), node:http client',
      call: plainHttpCall(server.url, http.transport.sessionId as string, 'file_exists', { paths: ['.'] }),
      server: server.pid,
      times: [],
      cpu: [],
      serverCpu: [],
    },
  ]
  for (let i = 0; i < WARMUP; i++) for (const s of series) await s.call()
  // One call of each series per round, the order rotated each round (inTurn).
  const steps = series.map((s) => async () => {
    const serverBefore = s.server === undefined ? 0 : cpuOf(s.server)
    const cpu = ownCpu()
    s.times.push(await timed(s.call))
    s.cpu.push(ownCpu() - cpu)
    if (s.server !== undefined) s.serverCpu.push(cpuOf(s.server) - serverBefore)
  })
  for (let i = 0; i < CALLS; i++) await inTurn(i, steps)
  console.log(`${CALLS} interleaved calls per series after ${WARMUP} warm-up rounds, the order rotated each round; min – median – max\n`)
  for (const s of series) report(s.name, spread(s.times, 2, 'ms'))
  const m = (name: string) => median((series.find((s) => s.name === name) as Series).times)
  console.log('')
  for (const tool of ['shell_run(["true"])', 'file_exists(["."])']) {
    const base = m(`library ${tool}`)
    const overStdio = m(`stdio ${tool}`) - base
    const overHttp = m(`http ${tool}`) - base
    report(`MCP over stdio adds to library ${tool}`, `${overStdio.toFixed(2)} ms (${(m(`stdio ${tool}`) / base).toFixed(2)}x)`, check(overStdio <= 1, '≤ 1 ms'))
    report(`MCP over HTTP adds to library ${tool}`, `${overHttp.toFixed(2)} ms (${(m(`http ${tool}`) / base).toFixed(2)}x)`, check(overHttp <= 2, '≤ 2 ms'))
  }
  // The floor spawns nothing hands would not: only its lstat is timed against, since a spawn from
  // its small process is cheaper than one from this large one.
  const floorAdds = m('floor http file_exists(["."])') - m('raw lstat(".")')
  report('  a bare server (the floor) adds to raw lstat(".")', `${floorAdds.toFixed(2)} ms`)
  report('  hands over HTTP adds beyond the floor', `${(m('http file_exists(["."])') - m('library file_exists(["."])') - floorAdds).toFixed(2)} ms`)
  const rss = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024
  report(
    'resident memory: this process · stdio · HTTP server',
    `${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} · ${rss(stdioPid).toFixed(0)} · ${rss(server.pid).toFixed(0)} MiB`,
  )
  console.log('  (the library and the raw spawns run in this process, under tsx; each spawn forks all of it)')
  console.log('\nCPU per call (medians): this process (the client, or the library with its call) · the process that answers (every thread, not its children)')
  for (const s of series) {
    const answering = s.serverCpu.length === 0 ? '' : ` · ${median(s.serverCpu).toFixed(2)} ms`
    report(`  ${s.name}`, `${median(s.cpu).toFixed(2)} ms${answering}`)
  }
  console.log('')
  const plain = m('http file_exists(["."]), node:http client') - m('library file_exists(["."])')
  report(
    '  the same over HTTP with a node:http client',
    `${plain.toFixed(2)} ms (${(m('http file_exists(["."]), node:http client') / m('library file_exists(["."])')).toFixed(2)}x)`,
  )
  report('library shell_run / raw spawn (medians)', `${(m('library shell_run(["true"])') / m('raw spawn bash -c true')).toFixed(2)}x`)

  // The first shell_run of a new session (its shell runtime starts then) against a later one, in
  // rounds: each round's ratio is of its own medians, and sessions of the two kinds alternate, so
  // load from elsewhere falls on both alike.
  const first: number[] = []
  const later: number[] = []
  const paused: number[] = []
  const firstAfterFs: number[] = []
  const firstFs: number[] = []
  const rawLater: number[] = []
  const rawPaused: number[] = []
  // The server's CPU (every thread) from the call's start to its answer: the first call's, a later one's.
  const firstCpu: number[] = []
  const laterCpu: number[] = []
  /** The server's CPU from the connect to the first call's answer: what a new session costs it before its first result, wherever that work falls. */
  const openCpu: number[] = []
  const onServer = async (into: number[], call: () => Promise<void>): Promise<number> => {
    const before = cpuOf(server.pid)
    const t = await timed(call)
    into.push(cpuOf(server.pid) - before)
    return t
  }
  const perRound = { later: [] as number[], paused: [] as number[], afterFs: [] as number[], raw: [] as number[] }
  for (let round = 0; round < ROUNDS; round++) {
    const at = { first: first.length, later: later.length, paused: paused.length, afterFs: firstAfterFs.length, raw: rawLater.length }
    for (let i = 0; i < NEW_SESSIONS / ROUNDS; i++) {
      const opening = cpuOf(server.pid)
      const c = await httpClient(server.url)
      first.push(await onServer(firstCpu, run(c.client, 'shell_run', { commands: ['true'] })))
      openCpu.push(cpuOf(server.pid) - opening)
      for (let k = 0; k < 5; k++) later.push(await onServer(laterCpu, run(c.client, 'shell_run', { commands: ['true'] })))
      for (let k = 0; k < 3; k++) {
        await new Promise((r) => setTimeout(r, PAUSE_MS))
        paused.push(await timed(run(c.client, 'shell_run', { commands: ['true'] })))
      }
      await c.transport.terminateSession()
      await c.client.close()
      const d = await httpClient(server.url)
      firstFs.push(await timed(run(d.client, 'file_exists', { paths: ['.'] })))
      firstAfterFs.push(await timed(run(d.client, 'shell_run', { commands: ['true'] })))
      await d.transport.terminateSession()
      await d.client.close()
      // The machine's own share of the pause: a raw spawn after one and right after another.
      for (let k = 0; k < 3; k++) {
        await new Promise((r) => setTimeout(r, PAUSE_MS))
        rawPaused.push(await timed(rawSpawn))
        rawLater.push(await timed(rawSpawn))
      }
    }
    const firstHere = median(first.slice(at.first))
    perRound.later.push(firstHere / median(later.slice(at.later)))
    perRound.paused.push(firstHere / median(paused.slice(at.paused)))
    perRound.afterFs.push(median(firstAfterFs.slice(at.afterFs)) / median(later.slice(at.later)))
    perRound.raw.push(median(rawPaused.slice(at.raw)) / median(rawLater.slice(at.raw)))
  }
  console.log('')
  report(`first shell_run of a new HTTP session (${NEW_SESSIONS})`, spread(first, 2, 'ms'))
  report('a later shell_run of the same sessions', spread(later, 2, 'ms'))
  const ratio = median(perRound.later)
  report(`  first / later, per round (${ROUNDS} rounds)`, `${spread(perRound.later, 2)}x`, check(ratio <= 1.5, '≤ 1.5x, the median'))
  report('  server CPU during the call: first · later (medians)', `${median(firstCpu).toFixed(2)} · ${median(laterCpu).toFixed(2)} ms`)
  report('  server CPU from connect to the first answer (median)', `${median(openCpu).toFixed(2)} ms`)
  report(`a later shell_run after a ${PAUSE_MS} ms pause`, spread(paused, 2, 'ms'))
  const pausedRatio = median(perRound.paused)
  report('  first / later after a pause, per round', `${spread(perRound.paused, 2)}x`, check(pausedRatio <= 1.5, '≤ 1.5x, the median'))
  report(`  raw spawn after a ${PAUSE_MS} ms pause / right after one`, `${spread(perRound.raw, 2)}x`)
  report(`first call (file_exists) of other new sessions (${NEW_SESSIONS})`, spread(firstFs, 2, 'ms'))
  report('  then their first shell_run', spread(firstAfterFs, 2, 'ms'))
  report('  first shell_run after file_exists / later, per round', `${spread(perRound.afterFs, 2)}x`)

  await http.transport.terminateSession()
  await http.client.close()
  await floorHttp.client.close()
} finally {
  for (const stop of stops.reverse()) await stop().catch(() => {})
  rmSync(root, { recursive: true, force: true })
}
