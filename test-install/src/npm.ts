import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'

/**
 * The environment a consumer's npm runs in: this machine's, without the npm_* / pnpm variables
 * the workspace's own pnpm set, and with node-gyp pointed at the headers Node ships with (when
 * they are there) so node-pty builds without downloading them.
 */
export function consumerEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(npm_|pnpm_|PNPM_|INIT_CWD$|NODE_OPTIONS$|VITEST|TURBO_)/i.test(k)) continue
    env[k] = v
  }
  const prefix = dirname(dirname(process.execPath))
  if (existsSync(join(prefix, 'include', 'node', 'node.h'))) env['npm_config_nodedir'] = prefix
  // The lockfile records where each package came from (a machine's npmrc may turn that off).
  env['npm_config_omit_lockfile_registry_resolved'] = 'false'
  env['npm_config_update_notifier'] = 'false'
  env['npm_config_fund'] = 'false'
  env['npm_config_audit'] = 'false'
  return env
}

/** Commands started by `run` that have not ended, each the leader of its own process group. */
const running = new Set<ChildProcess>()

/**
 * Run a command; resolves with its output, rejects with stdout and stderr in the message. It runs
 * in a process group of its own, so `stopRunning` can end it with everything it started (npm's
 * install scripts, node-gyp, the compiler) when a test gives up on it.
 */
export function run(
  file: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: options.cwd, env: options.env ?? consumerEnv(), detached: true, stdio: ['pipe', 'pipe', 'pipe'] })
    running.add(child)
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    child.once('error', (e) => {
      running.delete(child)
      reject(new Error(`${file} ${args.join(' ')} failed: ${e.message}`))
    })
    child.once('close', (code, signal) => {
      running.delete(child)
      if (code === 0) resolve({ stdout, stderr })
      else reject(new Error(`${file} ${args.join(' ')} failed: ${signal ?? `exit ${code}`}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`))
    })
    // A command may end without reading its input: that is not an error of the run.
    child.stdin.on('error', () => {})
    child.stdin.end(options.input)
  })
}

/** SIGKILL the process group of every command `run` started that is still running (a set-up that timed out). */
export function stopRunning(): void {
  for (const child of running) {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  running.clear()
}
