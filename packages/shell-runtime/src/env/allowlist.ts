/** Variables every command sees when the host has them (SPEC §3, Environment). */
export const BASE_ALLOWLIST: readonly string[] = ['PATH', 'HOME', 'USER', 'LANG', 'LC_*', 'TERM', 'TMPDIR', 'SHELL']

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
