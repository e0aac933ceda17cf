import { parseEnv0 } from './parse-env0.ts'

/** The sentinel printed before `env -0`, so whatever the profile prints is skipped. */
export const LOGIN_ENV_SENTINEL = '\0HANDS_LOGIN_ENV\0'

/** Single-quote `s` for bash. */
export function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`
}

/**
 * The bash line that prints a login shell's environment: it execs `bash -l` (so the profile
 * runs once) which prints the sentinel and then `env -0`.
 */
export function loginEnvScript(bash: string): string {
  return `exec ${shellQuote(bash)} -l -c ${shellQuote(`printf '\\0HANDS_LOGIN_ENV\\0'; exec env -0`)}`
}

/** The environment printed after the sentinel, or null when the sentinel never came. */
export function parseLoginEnv(stdout: string): Record<string, string> | null {
  const at = stdout.indexOf(LOGIN_ENV_SENTINEL)
  if (at < 0) return null
  return parseEnv0(stdout.slice(at + LOGIN_ENV_SENTINEL.length))
}

/** Where the login environment came from, for hosts that want to show it. */
export interface LoginEnvironment {
  /** The allowed variables commands start from (before the mode's own settings). */
  env: Record<string, string>
  /** `login` when captured from `bash -l`, `host` when the capture failed and the host's allowed variables were used. */
  source: 'login' | 'host'
  /** Why the capture failed, or null. */
  error: string | null
}
