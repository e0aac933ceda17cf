import type { ShellRuntimeOptions } from './options.ts'
import { Session, type LoginEnvironment } from './session.ts'

/**
 * Capture the login environment once, outside any session: a short-lived runtime runs `bash -l`
 * in its own job tree (so whatever the profile starts is stopped), then is closed. Pass the
 * result to many runtimes as `loginEnv` so none of them runs a login shell of its own.
 */
export async function captureLoginEnvironment(options: ShellRuntimeOptions): Promise<LoginEnvironment> {
  const { loginEnv: _ignored, ...own } = options
  const session = new Session(own)
  try {
    return await session.loginEnv()
  } finally {
    await session.close()
  }
}
