import { spawn } from 'node:child_process'
import { resolveInside } from '@hands/fs-runtime'
import { checkInput, shellRun } from '@hands/contracts'
import { createShellRuntime } from '../src/index.ts'
const rt = createShellRuntime({ roots: ['/tmp'] })
await rt.shell_run({ commands: ['true'] })
const N = 300
async function time(label: string, fn: () => Promise<unknown> | unknown) {
  for (let i = 0; i < 20; i++) await fn()
  const t = performance.now()
  for (let i = 0; i < N; i++) await fn()
  console.log(label.padEnd(30), ((performance.now() - t) / N).toFixed(3), 'ms')
}
const raw = (args: string[], env?: NodeJS.ProcessEnv, extra = {}) => new Promise<void>((r) => { const c = spawn('/usr/bin/bash', args, { stdio: ['ignore', 'pipe', 'pipe'], env, ...extra }); c.stdout.resume(); c.stderr.resume(); c.once('close', () => r()) })
const rawExit = (args: string[], env?: NodeJS.ProcessEnv, extra = {}) => new Promise<void>((r) => { const c = spawn('/usr/bin/bash', args, { stdio: ['ignore', 'pipe', 'pipe'], env, ...extra }); c.stdout.resume(); c.stderr.resume(); c.once('exit', () => r()) })
const env = (await rt.loginEnvironment()).env
await time('raw bash -c true (close)', () => raw(['-c', 'true']))
await time('raw, exit only', () => rawExit(['-c', 'true']))
await time('raw small env', () => raw(['-c', 'true'], env))
await time('raw detached', () => raw(['-c', 'true'], env, { detached: true }))
await time('shell_run', () => rt.shell_run({ commands: ['true'] }))
await time('checkInput', () => checkInput(shellRun, { commands: ['true'] }))
await time('resolveInside', () => resolveInside(['/tmp'], '/tmp', { access: 'cwd' }))
await time('raw bash -c true (close)', () => raw(['-c', 'true']))
await time('shell_run', () => rt.shell_run({ commands: ['true'] }))
await rt.close()
