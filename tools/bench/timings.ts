import { spawn } from 'node:child_process'

/** The median of `xs` (the upper one of an even count). */
export function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
}

/** `min – median – max ms` of `xs`. */
export function spread(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b)
  return `${(s[0] as number).toFixed(2)} – ${median(xs).toFixed(2)} – ${(s[s.length - 1] as number).toFixed(2)} ms`
}

/** The baseline of every per-call figure: spawn `bash -c true` and wait for its exit. */
export function rawSpawn(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', 'true'], { stdio: 'ignore' })
    child.once('error', reject)
    child.once('exit', () => resolve())
  })
}
