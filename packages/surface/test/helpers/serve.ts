import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { handsArgv } from './cli.ts'
import { REPO } from './mcp.ts'
import { eventually, processesMentioning } from './procs.ts'
import { tempRoot } from './tmp.ts'

/** A `hands serve --http` process of its own, with a private TMPDIR (so its spool folders can be counted). */
export interface ServedHttp {
  url: string
  pid: number
  child: ChildProcess
  /** The server's TMPDIR: every spool folder and ruleset keeper of its sessions names it. */
  tmp: string
  root: string
  stderr(): string
  /** SIGTERM, wait for the exit, then remove the temp folders. */
  stop(): Promise<void>
}

/** Start the server process itself (the built bin on node, no pnpm between) on a free loopback port. */
export async function serveHttpProcess(args: string[] = [], env: Record<string, string> = {}, listen = '127.0.0.1:0'): Promise<ServedHttp> {
  const root = tempRoot('hands-served-root-')
  const tmp = tempRoot('hands-served-tmp-')
  const [command, ...argv] = handsArgv(['serve', '--root', root.dir, '--http', listen, ...args])
  const child = spawn(command, argv, {
    cwd: REPO,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...(process.env as Record<string, string>), TMPDIR: tmp.dir, ...env },
  })
  let stderr = ''
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString()
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`the server did not start: ${stderr}`))
    }, 30_000)
    const look = () => {
      const m = /at (http:\/\/\S+\/mcp)/.exec(stderr)
      if (m) {
        clearTimeout(timer)
        resolve(m[1] as string)
      }
    }
    child.stderr?.on('data', look)
    child.once('exit', () => {
      clearTimeout(timer)
      reject(new Error(`the server exited: ${stderr}`))
    })
  }).catch(async (e: unknown) => {
    await exited
    root.remove()
    tmp.remove()
    throw e
  })
  return {
    url,
    pid: child.pid as number,
    child,
    tmp: tmp.dir,
    root: root.dir,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
      root.remove()
      tmp.remove()
    },
  }
}

/** The cgroup v2 directory a process lives in, or null when there is none. */
function cgroupDirOf(pid: number): string | null {
  try {
    const own = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('0::'))
    const mount = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((l) => l.split(' - '))
      .find((parts) => parts[1]?.startsWith('cgroup2 '))?.[0]
      ?.split(' ')[4]
    if (own === undefined || mount === undefined) return null
    return join(mount, own.slice(3))
  } catch {
    return null
  }
}

/** What a server's sessions leave on the machine: session cgroups, spool folders, its reaper, live processes naming its TMPDIR or root (shells, ruleset keepers). */
export interface Leftovers {
  cgroups: string[]
  spools: string[]
  processes: Array<{ pid: number; cmd: string }>
}

/** Count what the server's sessions hold now. `cgroupDir` is the server's own cgroup (read it while it runs). */
export function leftovers(s: Pick<ServedHttp, 'pid' | 'tmp' | 'root'>, cgroupDir: string | null): Leftovers {
  const cgroups = cgroupDir === null || !existsSync(cgroupDir) ? [] : readdirSync(cgroupDir).filter((n) => n.startsWith(`hands-${s.pid}-`))
  const spools = existsSync(s.tmp) ? readdirSync(s.tmp).filter((n) => n.startsWith('hands-shell-')) : []
  // The server's one reaper names the server's pid (`hands-reaper hands-<pid>`); its shells and keepers name its TMPDIR or root.
  // The server's spawner, shared by its sessions and ended with the last of them, is its child running the helper's --spawner.
  const spawners = processesMentioning('hands-confine --spawner').filter((p) => parentOf(p.pid) === s.pid)
  const all = [...processesMentioning(`hands-reaper hands-${s.pid}`), ...processesMentioning(s.tmp), ...processesMentioning(s.root), ...spawners]
  const processes = [...new Map(all.filter((p) => p.pid !== s.pid).map((p) => [p.pid, p])).values()]
  return { cgroups, spools, processes }
}

/** The parent of process `pid`, or 0 when it is gone. */
function parentOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  } catch {
    return 0
  }
}

/** The server's own cgroup directory, where its session cgroups are made. */
export function serverCgroup(pid: number): string | null {
  return cgroupDirOf(pid)
}

/** True once nothing of `s`'s sessions is left. */
export async function nothingLeft(s: Pick<ServedHttp, 'pid' | 'tmp' | 'root'>, cgroupDir: string | null, ms = 60_000): Promise<Leftovers> {
  let last = leftovers(s, cgroupDir)
  await eventually(() => {
    last = leftovers(s, cgroupDir)
    return last.cgroups.length === 0 && last.spools.length === 0 && last.processes.length === 0
  }, ms)
  return last
}

/** An SDK client connected over Streamable HTTP. */
export async function httpClient(url: string, capabilities: Record<string, unknown> = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(url))
  const client = new Client({ name: 'hands-http-test', version: '0.0.0' }, { capabilities })
  await client.connect(transport)
  return { client, transport }
}

export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
}

/** One raw HTTP request to the MCP endpoint: status, headers and the body text. */
export async function post(url: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  })
  return { status: res.status, headers: res.headers, text: await res.text() }
}

/** The JSON-RPC message in a response body, whether plain JSON or one SSE `data:` line. */
export function jsonRpc(text: string): { id?: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } } {
  const data = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? 'null')
  return JSON.parse(data)
}

/** A home folder whose login profile appends a line to a counter each time a login shell runs. */
export function countingHome(): { home: string; count: () => number; remove: () => void } {
  const t = tempRoot('hands-home-')
  const counter = join(t.dir, 'login-shells')
  writeFileSync(join(t.dir, '.bash_profile'), `echo login >> ${JSON.stringify(counter)}\n`)
  return {
    home: t.dir,
    count: () =>
      existsSync(counter)
        ? readFileSync(counter, 'utf8')
            .split('\n')
            .filter((l) => l === 'login').length
        : 0,
    remove: t.remove,
  }
}
