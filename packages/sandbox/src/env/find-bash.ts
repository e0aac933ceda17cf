import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'

/** Bash found per PATH: every session of a host looks it up with the same one. */
const found = new Map<string, string>()

/** The first `bash` on the PATH of `env`, else `/bin/bash`; looked up once per PATH in a process. */
export function findBash(env: Record<string, string | undefined>): string {
  const path = env['PATH'] ?? ''
  let bash = found.get(path)
  if (bash === undefined) {
    bash = lookUp(path)
    found.set(path, bash)
  }
  return bash
}

function lookUp(path: string): string {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue
    const candidate = join(dir, 'bash')
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {
      // next
    }
  }
  return '/bin/bash'
}
