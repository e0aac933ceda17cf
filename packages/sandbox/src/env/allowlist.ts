/**
 * The locale variables: LANG, LC_ALL and the categories POSIX defines, plus the ones glibc adds.
 * Only these names pass, never any `LC_` prefix (a host variable `LC_MY_TOKEN` is not a locale).
 */
export const LOCALE_VARS: readonly string[] = [
  'LANG',
  'LC_ALL',
  'LC_COLLATE',
  'LC_CTYPE',
  'LC_MESSAGES',
  'LC_MONETARY',
  'LC_NUMERIC',
  'LC_TIME',
  'LC_ADDRESS',
  'LC_IDENTIFICATION',
  'LC_MEASUREMENT',
  'LC_NAME',
  'LC_PAPER',
  'LC_TELEPHONE',
]

/** Variables every command sees when the host has them (SPEC §3, Environment). */
export const BASE_ALLOWLIST: readonly string[] = ['PATH', 'HOME', 'USER', ...LOCALE_VARS, 'TERM', 'TMPDIR', 'SHELL']

/** A predicate over variable names: exact names, or prefixes written with a trailing `*`. */
export function allowlistMatcher(names: readonly string[]): (name: string) => boolean {
  const exact = new Set<string>()
  const prefixes: string[] = []
  for (const n of names) {
    if (n.endsWith('*')) prefixes.push(n.slice(0, -1))
    else exact.add(n)
  }
  return (name) => exact.has(name) || prefixes.some((p) => name.startsWith(p))
}

/** The subset of `env` whose names the allowlist (base plus `extra`) admits. */
export function pickAllowed(env: Readonly<Record<string, string | undefined>>, extra: readonly string[] = []): Record<string, string> {
  const allowed = allowlistMatcher([...BASE_ALLOWLIST, ...extra])
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && allowed(k)) out[k] = v
  }
  return out
}
