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

/** Milliseconds `fn` takes, awaited. */
export async function timed(fn: () => unknown): Promise<number> {
  const t = performance.now()
  await fn()
  return performance.now() - t
}

/**
 * Run `steps` one after another starting at step `round` (mod their count): round 0 runs a, b, c;
 * round 1 b, c, a; and so on. A step pays for what the one before it left behind (a child's exit,
 * a server finishing up, writeback), so over the rounds every step takes every place in turn.
 */
export async function inTurn(round: number, steps: ReadonlyArray<() => Promise<unknown>>): Promise<void> {
  for (let k = 0; k < steps.length; k++) await (steps[(round + k) % steps.length] as () => Promise<unknown>)()
}

/**
 * The baseline of every per-call figure: spawn `bash -c <script>` with stdin ignored and both
 * outputs on pipes (as shell_run runs a command), read them, and resolve once it has exited and
 * the pipes have closed; reject when it exits non-zero (a failed baseline is no baseline).
 * `onStdout` is told the size of each chunk of its output; `prefix` runs bash under another
 * program (a supervisor), in `cwd`. Resolves with the last 2,000 characters of its stderr.
 */
export function rawSpawn(script = 'true', onStdout?: (bytes: number) => void, options: { cwd?: string; prefix?: string[] } = {}): Promise<string> {
  const argv = [...(options.prefix ?? []), 'bash', '-c', script]
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0] as string, argv.slice(1), { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => onStdout?.(d.length))
    child.stderr.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-2000)
    })
    child.once('error', reject)
    child.once('close', (code) => (code === 0 ? resolve(stderr) : reject(new Error(`${argv.join(' ')}: exit ${code}: ${stderr}`))))
  })
}
