/**
 * `pnpm bench startup`: the built `hands serve` on plain node, from spawn to the `initialize`
 * response, side by side with a minimal server on the same MCP SDK that only answers
 * `initialize` (the floor any SDK server pays), interleaved in one run. Also the cold
 * `import('@hands/surface')` against a cold import of the SDK's server module, the time to the
 * first `tools/list` answer (hands loads its tools after the handshake), and the idle RSS of both
 * servers. Needs `pnpm build` (the root `bench` script runs it first).
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { inTurn, median, spread } from './timings.ts'

const here = dirname(fileURLToPath(import.meta.url))
const repo = join(here, '..', '..')
const bin = join(repo, 'packages', 'surface', 'dist', 'cli', 'main.js')
const minimal = join(here, 'fixtures', 'minimal-mcp-server.mjs')
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 15)
const TARGET = 1.3

if (!existsSync(bin)) {
  console.error(`${bin} is missing; run pnpm build first (pnpm bench does)`)
  process.exit(1)
}

const INITIALIZE = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0.0.0' } },
})}\n`
// What a client sends next: the initialized notification, then its first request.
const THEN_LIST = `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) / 1024 : Number.NaN
}

/**
 * Spawn a server, send `initialize` at once and time its response; then send `initialized` +
 * `tools/list` and time that response (the minimal server answers it with an error: a round
 * trip all the same); then its RSS once idle; then close stdin and wait for exit.
 */
function startOnce(args: string[], cwd: string): Promise<{ ms: number; listMs: number; rss: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'], env: process.env })
    let out = ''
    let err = ''
    let ms = -1
    let listMs = -1
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`no initialize response in 30 s from ${args.join(' ')}: ${err}`))
    }, 30_000)
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString()
    })
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString()
      if (ms < 0 && out.includes('"id":1')) {
        ms = performance.now() - started
        child.stdin.write(THEN_LIST)
      }
      if (ms < 0 || listMs >= 0 || !out.includes('"id":2')) return
      listMs = performance.now() - started
      // Idle: let the event loop settle before reading RSS.
      setTimeout(() => {
        const rss = rssMiB(child.pid as number)
        child.stdin.end()
        child.once('exit', () => {
          clearTimeout(timer)
          resolve({ ms, listMs, rss })
        })
      }, 300)
    })
    child.on('error', reject)
    child.stdin.write(INITIALIZE)
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
  const kind = (args: string[], cwd: string) => ({ args, cwd, init: [] as number[], list: [] as number[], rss: [] as number[] })
  const floor = kind([minimal], here)
  const hands = kind([bin, 'serve', '--root', root], root)
  // One warm-up of each (disk cache), then interleaved rounds.
  for (const k of [floor, hands]) await startOnce(k.args, k.cwd)
  // Each goes first in every other round, so neither pays for what the other left behind.
  const steps = [floor, hands].map((k) => async () => {
    const r = await startOnce(k.args, k.cwd)
    k.init.push(r.ms)
    k.list.push(r.listMs)
    k.rss.push(r.rss)
  })
  for (let i = 0; i < ROUNDS; i++) await inTurn(i, steps)
  console.log(`node ${process.version}, ${ROUNDS} interleaved rounds, min – median – max\n`)
  report('minimal SDK server: spawn → initialize', spread(floor.init, 0, 'ms'))
  report('hands serve (dist, plain node): spawn → initialize', spread(hands.init, 0, 'ms'))
  const ratio = median(hands.init) / median(floor.init)
  report('  ratio hands / minimal (medians)', `${ratio.toFixed(2)}x`, `${ratio <= TARGET ? 'ok' : 'MISSED'} (target ≤ ${TARGET}x)`)
  report('minimal SDK server: spawn → tools/list answered', spread(floor.list, 0, 'ms'))
  report('hands serve: spawn → tools/list answered', spread(hands.list, 0, 'ms'))
  report('  ratio hands / minimal (medians)', `${(median(hands.list) / median(floor.list)).toFixed(2)}x`, '(the tools load after initialize)')
  report('minimal SDK server: idle RSS', spread(floor.rss, 0, 'MiB'))
  report('hands serve: idle RSS, tools loaded', spread(hands.rss, 0, 'MiB'))
  report('  ratio hands / minimal (medians)', `${(median(hands.rss) / median(floor.rss)).toFixed(2)}x`)

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
