/**
 * `pnpm bench cancel`: from a client's `notifications/cancelled` for a running `shell_run` to the
 * moment no process of the command is left, through the SDK client over stdio against the built
 * `hands serve`, beside the same for a raw `bash -c` whose process group this process signals
 * itself (SIGTERM). Both commands obey SIGTERM; a tree that ignores it is stopped after the grace
 * (`--stop-grace-ms`), which the last series shows with a 300 ms grace. Needs `pnpm build`.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { inTurn, median, spread } from './timings.ts'

const here = dirname(fileURLToPath(import.meta.url))
const BIN = join(here, '..', '..', 'packages', 'surface', 'dist', 'cli', 'main.js')
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 10)
if (!existsSync(BIN)) {
  console.error(`${BIN} is missing; run pnpm build first (pnpm bench does)`)
  process.exit(1)
}

/** Pids of live processes whose command line is exactly `cmd`. */
function running(cmd: string): number[] {
  const out: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim() !== cmd) continue
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      if (stat[stat.lastIndexOf(')') + 2] !== 'Z') out.push(Number(entry))
    } catch {
      // gone
    }
  }
  return out
}

async function until(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 1))
}

const root = mkdtempSync(join(tmpdir(), 'hands-bench-cancel-'))
const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'serve', '--root', root, '--stop-grace-ms', '300'], stderr: 'ignore' })
const client = new Client({ name: 'bench', version: '0.0.0' })
try {
  await client.connect(transport)
  await client.callTool({ name: 'shell_run', arguments: { commands: ['true'] } })

  /** Cancel a shell_run of `script` once `sleep N` runs; ms from the cancel to no `sleep N` left. */
  const cancelOnce = async (script: string, sleep: string) => {
    const cancel = new AbortController()
    const call = client.callTool({ name: 'shell_run', arguments: { commands: [script] } }, undefined, { signal: cancel.signal }).catch(() => undefined)
    await until(() => running(sleep).length > 0)
    const t = performance.now()
    cancel.abort()
    await until(() => running(sleep).length === 0)
    const ms = performance.now() - t
    await call
    return ms
  }
  const rawOnce = async () => {
    const child = spawn('bash', ['-c', 'sleep 1235; :'], { stdio: 'ignore', detached: true })
    await until(() => running('sleep 1235').length > 0)
    const t = performance.now()
    process.kill(-(child.pid as number), 'SIGTERM')
    await until(() => running('sleep 1235').length === 0)
    return performance.now() - t
  }
  const hands: number[] = []
  const raw: number[] = []
  const stubborn: number[] = []
  const steps = [
    async () => hands.push(await cancelOnce('sleep 1234; :', 'sleep 1234')),
    async () => raw.push(await rawOnce()),
    async () => stubborn.push(await cancelOnce('trap "" TERM; sleep 1236 & wait; wait', 'sleep 1236')),
  ]
  for (let i = 0; i < ROUNDS; i++) await inTurn(i, steps)
  console.log(`node ${process.version}, ${ROUNDS} interleaved rounds, min – median – max\n`)
  console.log(`raw bash -c, its group SIGTERMed here → no sleep left     ${spread(raw, 1, 'ms')}`)
  console.log(`hands, notifications/cancelled → no sleep left         ${spread(hands, 1, 'ms')}`)
  console.log(`  ratio hands / raw (medians)                            ${(median(hands) / median(raw)).toFixed(2)}x`)
  console.log(`hands, a tree ignoring SIGTERM, 300 ms grace            ${spread(stubborn, 1, 'ms')}`)
} finally {
  await client.close()
  rmSync(root, { recursive: true, force: true })
}
