import { execFile, type ExecFileOptions } from 'node:child_process'
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

/** Run a command; resolves with its output, rejects with stdout and stderr in the message. */
export function run(file: string, args: string[], options: ExecFileOptions & { input?: string } = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(file, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, env: consumerEnv(), ...options }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${file} ${args.join(' ')} failed: ${err.message}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`))
      else resolve({ stdout: String(stdout), stderr: String(stderr) })
    })
    if (options.input !== undefined) child.stdin?.end(options.input)
  })
}
