import { spawn } from 'node:child_process'

/** The median of `xs` (the upper one of an even count). */
export function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
}

/** `min – median – max` of `xs`, each with `digits` decimals, then `unit` when given. */
export function spread(xs: number[], digits = 2, unit = ''): string {
  const s = [...xs].sort((a, b) => a - b)
  const text = `${(s[0] as number).toFixed(digits)} – ${median(xs).toFixed(digits)} – ${(s[s.length - 1] as number).toFixed(digits)}`
  return unit === '' ? text : `${text} ${unit}`
}

/** The baseline of every per-call figure: spawn `bash -c true` and wait for its exit. */
export function rawSpawn(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', 'true'], { stdio: 'ignore' })
    child.once('error', reject)
    child.once('exit', () => resolve())
  })
}
