/** Parse the output of `env -0` (NAME=value entries separated by NUL) into a record. */
export function parseEnv0(text: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const entry of text.split('\0')) {
    const eq = entry.indexOf('=')
    if (eq <= 0) continue
    out[entry.slice(0, eq)] = entry.slice(eq + 1)
  }
  return out
}
