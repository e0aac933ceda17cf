/**
 * `pnpm bench startup`: the built `hands serve` on plain node, from spawn to the `initialize`
 * response and to the first `tools/list` answer, side by side with a minimal server on the same
 * MCP SDK that only answers `initialize` (the floor any SDK server pays) and with the MCP
 * filesystem server (`@modelcontextprotocol/server-filesystem`, its installed bin), interleaved in
 * one run. hands runs twice: for a client that offers no roots and for one that offers roots (it
 * answers the server's `roots/list`; its first `tools/call` waits for that answer). Also the cold
 * `import('@hands/surface')` against a cold import of the SDK's server module, and the idle RSS of
 * each server. Needs `pnpm build` (the root `bench` script runs it first).
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { inTurn, median, spread } from './timings.ts'

const here = dirname(fileURLToPath(import.meta.url))
const repo = join(here, '..', '..')
const bin = join(repo, 'packages', 'surface', 'dist', 'cli', 'main.js')
const minimal = join(here, 'fixtures', 'minimal-mcp-server.mjs')
/** The filesystem server's bin, as npm installed it. */
const filesystem = (() => {
  const require = createRequire(join(here, 'package.json'))
  const pkg = require.resolve('@modelcontextprotocol/server-filesystem/package.json')
  const { bin: bins } = JSON.parse(readFileSync(pkg, 'utf8')) as { bin: Record<string, string> }
  return join(dirname(pkg), bins['mcp-server-filesystem'] as string)
})()
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 15)
const TARGET = 1.3
const LIST_TARGET = 1.1

if (!existsSync(bin)) {
  console.error(`${bin} is missing; run pnpm build first (pnpm bench does)`)
  process.exit(1)
}

const line = (message: unknown) => `${JSON.stringify(message)}\n`
const initialize = (capabilities: Record<string, unknown>) =>
  line({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities, clientInfo: { name: 'bench', version: '0.0.0' } },
  })
// What a client sends next: the initialized notification, then its first request.
const THEN_LIST = line({ jsonrpc: '2.0', method: 'notifications/initialized' }) + line({ jsonrpc: '2.0', id: 2, method: 'tools/list' })
const FIRST_CALL = line({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'file_exists', arguments: { paths: ['.'] } } })

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) / 1024 : Number.NaN
}

interface Start {
  ms: number
  listMs: number
  /** spawn → the first tools/call answered; NaN when not asked. */
  callMs: number
  rss: number
}

/**
 * Spawn a server, send `initialize` at once and time its response; then send `initialized` +
 * `tools/list` and time that response (the minimal server answers it with an error: a round
 * trip all the same); with `roots`, answer the server's `roots/list` with it and time a first
 * `tools/call` too; then its RSS once idle (after `ready` shows on stderr, when given); then close
 * stdin and wait for exit.
 */
function startOnce(args: string[], cwd: string, roots: string | null = null, ready: RegExp | null = null): Promise<Start> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'], env: process.env })
    let buffered = ''
    let err = ''
    const at: Record<number, number> = {}
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`no answers in 30 s from ${args.join(' ')}: ${err}`))
    }, 30_000)
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString()
    })
    /** Once `ready` shows on stderr (hands: its tools have loaded), let the event loop settle, then read the RSS. */
    const done = (): unknown =>
      ready !== null && !ready.test(err)
        ? setTimeout(done, 20)
        : setTimeout(() => {
            const rss = rssMiB(child.pid as number)
            child.stdin.end()
            child.once('exit', () => {
              clearTimeout(timer)
              resolve({ ms: at[1] as number, listMs: at[2] as number, callMs: at[3] ?? Number.NaN, rss })
            })
          }, 300)
    child.stdout.on('data', (d: Buffer) => {
      buffered += d.toString()
      const lines = buffered.split('\n')
      buffered = lines.pop() as string
      for (const text of lines) {
        const message = JSON.parse(text) as { id?: number | string; method?: string }
        if (message.method === 'roots/list') {
          child.stdin.write(line({ jsonrpc: '2.0', id: message.id, result: { roots: [{ uri: pathToFileURL(roots as string).href, name: 'project' }] } }))
          continue
        }
        if (typeof message.id !== 'number' || 'method' in message) continue
        at[message.id] = performance.now() - started
        if (message.id === 1) child.stdin.write(THEN_LIST)
        else if (message.id === 2 && roots !== null) child.stdin.write(FIRST_CALL)
        else done()
      }
    })
    child.on('error', reject)
    child.stdin.write(initialize(roots === null ? {} : { roots: { listChanged: true } }))
  })
}

/** Milliseconds a fresh node takes to `import(specifier)`, timed inside that process. */
function importOnce(specifier: string, cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const code = `const t = performance.now(); await import(${JSON.stringify(specifier)}); process.stdout.write(String(performance.now() - t))`
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], { cwd, stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString()
    })
    child.on('error', reject)
    child.on('exit', (status) => (status === 0 ? resolve(Number(out)) : reject(new Error(`import(${specifier}) exited ${status}`))))
  })
}

function report(what: string, figure: string, verdict = '') {
  console.log(`${what.padEnd(52)} ${figure.padEnd(28)} ${verdict}`)
}

const root = mkdtempSync(join(tmpdir(), 'hands-bench-startup-'))
try {
  /** One record per server kind: how to start it, and what each start measured. */
  const kind = (args: string[], cwd: string, roots: string | null = null, ready: RegExp | null = null) => ({
    args,
    cwd,
    roots,
    ready,
    init: [] as number[],
    list: [] as number[],
    call: [] as number[],
    rss: [] as number[],
  })
  const floor = kind([minimal], here)
  // hands answers tools/list before its tools load; its idle RSS is read once they have (it says so on stderr).
  const loaded = /serving MCP over stdio/
  const hands = kind([bin, 'serve', '--root', root], root, null, loaded)
  // Started in / without --root, as a desktop client starts it: the client's roots are the session's.
  const handsRoots = kind([bin, 'serve'], '/', root, loaded)
  const fsServer = kind([filesystem, root], root)
  const all = [floor, hands, handsRoots, fsServer]
  // One warm-up of each (disk cache), then interleaved rounds.
  for (const k of all) await startOnce(k.args, k.cwd, k.roots, k.ready)
  // Each takes every place in turn, so none pays for what another left behind more than the rest.
  const steps = all.map((k) => async () => {
    const r = await startOnce(k.args, k.cwd, k.roots, k.ready)
    k.init.push(r.ms)
    k.list.push(r.listMs)
    k.call.push(r.callMs)
    k.rss.push(r.rss)
  })
  for (let i = 0; i < ROUNDS; i++) await inTurn(i, steps)
  const ratio = (a: number[], b: number[]) => median(a) / median(b)
  /** Round by round (both measured in the same round), a / b. */
  const perRound = (a: number[], b: number[]) => a.map((x, i) => x / (b[i] as number))
  console.log(`node ${process.version}, ${ROUNDS} interleaved rounds, min – median – max\n`)
  report('minimal SDK server: spawn → initialize', spread(floor.init, 0, 'ms'))
  report('MCP filesystem server: spawn → initialize', spread(fsServer.init, 0, 'ms'))
  report('hands serve (dist, plain node): spawn → initialize', spread(hands.init, 0, 'ms'))
  const r = ratio(hands.init, floor.init)
  report('  ratio hands / minimal (medians)', `${r.toFixed(2)}x`, `${r <= TARGET ? 'ok' : 'MISSED'} (target ≤ ${TARGET}x)`)
  report('hands serve, a client offering roots: → initialize', spread(handsRoots.init, 0, 'ms'))
  report('  ratio / minimal (medians)', `${ratio(handsRoots.init, floor.init).toFixed(2)}x`)
  report('minimal SDK server: spawn → tools/list answered', spread(floor.list, 0, 'ms'))
  report('MCP filesystem server: spawn → tools/list answered', spread(fsServer.list, 0, 'ms'))
  report('hands serve: spawn → tools/list answered', spread(hands.list, 0, 'ms'))
  const l = ratio(hands.list, fsServer.list)
  report('  ratio hands / filesystem server (medians)', `${l.toFixed(2)}x`, `${l <= LIST_TARGET ? 'ok' : 'MISSED'} (target ≤ ${LIST_TARGET}x)`)
  report('  ratio hands / filesystem server, per round', `${spread(perRound(hands.list, fsServer.list), 2)}x`)
  report('  ratio hands / minimal (medians)', `${ratio(hands.list, floor.list).toFixed(2)}x`)
  report('hands serve, a client offering roots: → tools/list', spread(handsRoots.list, 0, 'ms'))
  report('  ratio / filesystem server (medians)', `${ratio(handsRoots.list, fsServer.list).toFixed(2)}x`)
  report('  ratio / filesystem server, per round', `${spread(perRound(handsRoots.list, fsServer.list), 2)}x`)
  report('  → first tools/call (file_exists, after roots/list)', spread(handsRoots.call, 0, 'ms'))
  report('minimal SDK server: idle RSS', spread(floor.rss, 0, 'MiB'))
  report('MCP filesystem server: idle RSS', spread(fsServer.rss, 0, 'MiB'))
  report('hands serve: idle RSS, tools loaded', spread(hands.rss, 0, 'MiB'))
  report('  ratio hands / minimal (medians)', `${ratio(hands.rss, floor.rss).toFixed(2)}x`)
  report('  ratio hands / filesystem server (medians)', `${ratio(hands.rss, fsServer.rss).toFixed(2)}x`)
  report('  ratio hands / filesystem server, per round', `${spread(perRound(hands.rss, fsServer.rss), 2)}x`)

  const sdkImport: number[] = []
  const surfaceImport: number[] = []
  const imports = [
    async () => sdkImport.push(await importOnce('@modelcontextprotocol/sdk/server/index.js', here)),
    async () => surfaceImport.push(await importOnce('@hands/surface', here)),
  ]
  for (let i = 0; i < ROUNDS; i++) await inTurn(i, imports)
  report("cold import('@modelcontextprotocol/sdk/server/index.js')", spread(sdkImport, 0, 'ms'))
  report("cold import('@hands/surface') (dist)", spread(surfaceImport, 0, 'ms'))
  report('  ratio surface / SDK server module (medians)', `${(median(surfaceImport) / median(sdkImport)).toFixed(2)}x`)
} finally {
  rmSync(root, { recursive: true, force: true })
}
