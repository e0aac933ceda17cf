import { pickAllowed, type LoginEnvironment } from '@hands/sandbox/parts'
import type { ShellRuntimeOptions } from './options.ts'
import { Session } from './session.ts'

/**
 * Capture the login environment once, outside any session: a short-lived runtime runs `bash -l`
 * in its own job tree (so whatever the profile starts is stopped), then is closed. Pass the
 * result to many runtimes as `loginEnv` so none of them runs a login shell of its own.
 * Aborting `signal` stops the login shell at once; the capture then reports `source: 'host'`.
 */
export async function captureLoginEnvironment(options: ShellRuntimeOptions, signal?: AbortSignal): Promise<LoginEnvironment> {
  const { loginEnv: _ignored, ...own } = options
  if (signal?.aborted) {
    return { env: pickAllowed(own.hostEnv ?? process.env, own.envAllow), source: 'host', error: 'the capture was stopped before it began' }
  }
  const session = new Session(own)
  const stop = () => void session.close()
  signal?.addEventListener('abort', stop, { once: true })
  try {
    return await session.loginEnv()
  } finally {
    signal?.removeEventListener('abort', stop)
    await session.close()
  }
}
