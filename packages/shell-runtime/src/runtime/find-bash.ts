import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'

/** The first `bash` on the PATH of `env`, else `/bin/bash`. */
export function findBash(env: Record<string, string | undefined>): string {
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
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
