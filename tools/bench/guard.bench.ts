/**
 * `pnpm bench guard`: what the relay's guard of sockets and metadata (native/guard.c) costs, each
 * figure a ratio in one run. The same job runs under the helper with the seccomp supervisor and
 * Landlock as a shell_run line has them, without the guard and with it (--guard-sockets,
 * --guard-metadata), each with the record of changes off and on (a shell_run line's default, where
 * the metadata calls go to the relay already), and with no helper at all for the floor:
 *   - a command that opens no socket (`true`): the guard is only a longer filter and a few statx;
 *   - 2,000 connects to a UNIX socket in the root, 2,000 blocking and 2,000 non-blocking loopback
 *     TCP connects (timed inside the program, so interpreter start-up is not in the figure);
 *   - tar -xf of 5,000 small files, whose chown, chmod and utimes the guard performs.
 * Rounds alternate the variants; each figure is min – median – max, ratios of medians.
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { helperPath } from '@hands/shell-runtime'
import { median, spread } from './timings.ts'

const helper = helperPath()
if (helper === null) {
  console.log('guard: not measured (the helper is not built)')
  process.exit(0)
}
const base = realpathSync(mkdtempSync(join(existsShm() ? '/dev/shm' : tmpdir(), 'hands-bench-guard-')))
const root = join(base, 'root')
mkdirSync(root)

function existsShm(): boolean {
  try {
    return spawnSync('test', ['-d', '/dev/shm', '-a', '-w', '/dev/shm']).status === 0
  } catch {
    return false
  }
}

const confined = ['--oom-score-adj', '500', '--seccomp', '--landlock', '--write', base, '--rw', '/dev/null']
const guard = ['--guard-metadata', '--guard-sockets', '--socket-dir', base]
const effects = ['--effects', join(base, 'effects')]
const variants: Array<[string, string[] | null]> = [
  ['no helper', null],
  ['supervisor, no guard', confined],
  ['supervisor and guard', [...confined, ...guard]],
  // What a shell_run line runs with the account of changes on (the default), before and with the guard.
  ['changes, no guard', [...confined, ...effects]],
  ['changes and guard', [...confined, ...effects, ...guard]],
]

/** Run `argv` under `prefix` (null: directly); its stdout, or throw. */
function run(prefix: string[] | null, argv: string[]): { out: string; ms: number } {
  const full = prefix === null ? argv : [helper as string, ...prefix, '--', ...argv]
  const t = performance.now()
  const r = spawnSync(full[0] as string, full.slice(1), { encoding: 'utf8', cwd: root })
  const ms = performance.now() - t
  if (r.status !== 0) throw new Error(`${full.join(' ')}: exit ${r.status}: ${r.stderr}`)
  return { out: r.stdout, ms }
}

const python = spawnSync('sh', ['-c', 'command -v python3'], { encoding: 'utf8' }).stdout.trim()
const connects = `
import socket, sys, threading, time
kind, n = sys.argv[1], 2000
if kind == "unix":
    srv = socket.socket(socket.AF_UNIX); srv.bind("${root}/bench.sock"); addr = "${root}/bench.sock"; fam = socket.AF_UNIX
else:
    srv = socket.socket(); srv.bind(("127.0.0.1", 0)); addr = srv.getsockname(); fam = socket.AF_INET
srv.listen(128)
def serve():
    while True:
        c, _ = srv.accept(); c.close()
threading.Thread(target=serve, daemon=True).start()
t = time.perf_counter()
for _ in range(n):
    s = socket.socket(fam)
    if kind == "tcp-nb":
        s.setblocking(False)
        try: s.connect(addr)
        except BlockingIOError: pass
        import select; select.select([], [s], [])
    else:
        s.connect(addr)
    s.close()
print((time.perf_counter() - t) * 1000)
`
writeFileSync(join(base, 'connects.py'), connects)
const src = join(base, 'src')
mkdirSync(src)
for (let i = 0; i < 5000; i++) writeFileSync(join(src, `f${i}`), `${i}\n`)
spawnSync('tar', ['-cf', join(base, 'files.tar'), '-C', src, '.'])

const rounds = 7
const figures = new Map<string, number[]>()
const add = (key: string, ms: number) => figures.set(key, [...(figures.get(key) ?? []), ms])
for (let r = 0; r < rounds; r++) {
  for (const [name, prefix] of r % 2 === 0 ? variants : [...variants].reverse()) {
    let total = 0
    for (let k = 0; k < 50; k++) total += run(prefix, ['/bin/true']).ms
    add(`true|${name}`, total / 50)
    for (const kind of ['unix', 'tcp', 'tcp-nb']) {
      rmSync(join(root, 'bench.sock'), { force: true })
      add(`${kind}|${name}`, Number(run(prefix, [python, join(base, 'connects.py'), kind]).out.trim()))
    }
    rmSync(join(root, 'x'), { recursive: true, force: true })
    mkdirSync(join(root, 'x'))
    add(`tar|${name}`, run(prefix, ['/bin/tar', '-xf', join(base, 'files.tar'), '-C', join(root, 'x')]).ms)
  }
}

const rows: Array<[string, string]> = [
  ['true', 'a command that opens no socket (`true`), per start'],
  ['unix', '2,000 connects to a UNIX socket in the root'],
  ['tcp', '2,000 blocking loopback TCP connects'],
  ['tcp-nb', '2,000 non-blocking loopback TCP connects'],
  ['tar', 'tar -xf of 5,000 files (chown, chmod, utimes each)'],
]
for (const [key, what] of rows) {
  console.log(what)
  for (const [name] of variants) console.log(`  ${name.padEnd(24)} ${spread(figures.get(`${key}|${name}`) ?? [])} ms`)
  const m = (name: string) => median(figures.get(`${key}|${name}`) ?? [])
  console.log(
    `  guard / no guard: ${(m('supervisor and guard') / m('supervisor, no guard')).toFixed(2)}x, with changes on ${(m('changes and guard') / m('changes, no guard')).toFixed(2)}x; no guard / no helper: ${(m('supervisor, no guard') / m('no helper')).toFixed(2)}x`,
  )
}
rmSync(base, { recursive: true, force: true })
