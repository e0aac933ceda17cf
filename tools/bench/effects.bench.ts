/**
 * `pnpm bench effects`: what the account of changes on disk costs, against baselines measured in
 * the same run. (1) shell_run(["true"]) with changes observed, in a root of 10,000 and of 100,000
 * files, against a raw piped spawn of `bash -c true` and against the same runtime with changes
 * off: the observer records only what a job names, so a root's size should not matter.
 * (2) A command creating 20,000 small files, changes observed against changes off, on disk and on
 * tmpfs, in a directory it makes and in one that stood before it; then their removal. Beside them,
 * the same command run directly and under a seccomp supervisor that answers every call at once
 * (fixtures/notify-floor.c, built with the C compiler here): the least any observer built on
 * seccomp user notification costs on this machine, which the relay's ratio is read against.
 * Where this runs as root, also under a fanotify watch of the filesystem drained every 5 ms, read in
 * the command's own pid namespace so that its events are told from others' (fixtures/fanotify-floor.c):
 * the least the privileged alternative costs, for comparison; and under the same watch with the
 * reader naming each event's path (--resolve), what such an observer's own work adds to it.
 * (3) Everyday tools: tar -xf of 20,000 files, git clone of 5,000, cp -r of 10,000, npm install,
 * observed against off, each with its target and the floor of the calls that stay supervised.
 * (4) The race the account declares: a command whose second thread rewrites the path string of its
 * first thread's creates (fixtures/effects-race.c), how many of its 400 files the account misses
 * under each mechanism here.
 * BENCH_EFFECTS_BURST_ONLY=1 runs (2) to (4) alone; BENCH_EFFECTS_TOOLS=1 (3) alone;
 * BENCH_EFFECTS_TOOL=npm (or tar, git, cp) the one tool of (3); BENCH_EFFECTS_RACE=1 (4) alone; BENCH_EFFECTS_TMPFS_ONLY=1 leaves out (2)'s disk rows.
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createShellRuntime, type ShellRuntime } from '@hands/shell-runtime'
import { inTurn, median, rawSpawn, spread, timed } from './timings.ts'

function report(what: string, figure: string, verdict = '') {
  console.log(`${what.padEnd(62)} ${figure.padEnd(34)} ${verdict}`)
}
const check = (ok: boolean, target: string) => `${ok ? 'ok' : 'MISSED'} (target ${target})`

/** A root holding `files` small files, 100 to a directory. */
function rootOf(files: number): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), `hands-bench-effects-${files}-`)))
  for (let d = 0; d < files / 100; d++) {
    const dir = join(root, `d${d}`)
    mkdirSync(dir)
    for (let f = 0; f < 100; f++) writeFileSync(join(dir, `f${f}.txt`), 'x\n')
  }
  return root
}

/** fixtures/NAME.c built into `dir` with $CC, cc or gcc; null (and why, printed) without one. */
function buildFixture(dir: string, name: string): string | null {
  const out = join(dir, name)
  const source = new URL(`./fixtures/${name}.c`, import.meta.url).pathname
  for (const cc of [process.env.CC, 'cc', 'gcc'].filter((c): c is string => Boolean(c))) {
    const r = spawnSync(cc, ['-O2', '-o', out, source], { encoding: 'utf8' })
    if (r.status === 0) return out
    if (r.error === undefined) {
      console.log(`(no ${name} rows: ${cc} failed: ${r.stderr.trim().split('\n')[0]})`)
      return null
    }
  }
  console.log(`(no ${name} rows: no C compiler)`)
  return null
}

/** fixtures/fanotify-floor.c built, when it can watch `dir` here (root); null (and why, printed) otherwise. */
function buildFanotifyFloor(dir: string, watched: string): string | null {
  const bin = buildFixture(dir, 'fanotify-floor')
  if (bin === null) return null
  const r = spawnSync(bin, [watched, 'true'], { encoding: 'utf8' })
  if (r.status === 0) return bin
  console.log(`(no fanotify rows: ${r.stderr.trim()})`)
  return null
}

const made: Array<{ root: string; rts: ShellRuntime[] }> = []
const floorDir = mkdtempSync(join(tmpdir(), 'hands-bench-floor-'))
try {
  const isToolsOnly = Boolean(process.env.BENCH_EFFECTS_TOOLS)
  const isRaceOnly = Boolean(process.env.BENCH_EFFECTS_RACE)
  for (const files of process.env.BENCH_EFFECTS_BURST_ONLY || isToolsOnly || isRaceOnly ? [] : [10_000, 100_000]) {
    const root = rootOf(files)
    const on = createShellRuntime({ roots: [root] })
    const off = createShellRuntime({ roots: [root], changes: false })
    made.push({ root, rts: [on, off] })
    if (files === 10_000) console.log(`${on.confinement.summary.split('\n')[0]}; ${on.confinement.summary.split('\n').at(-1)}\n`)
    const first = await on.shell_run({ commands: ['true'] })
    if (first.commands[0]?.changes.is_complete !== true) throw new Error(`changes are not observed here: ${first.commands[0]?.changes.note}`)
    await off.shell_run({ commands: ['true'] })
    const raw: number[] = []
    const tOn: number[] = []
    const tOff: number[] = []
    for (let i = 0; i < 300; i++) {
      await inTurn(i, [
        async () => raw.push(await timed(rawSpawn)),
        async () => tOn.push(await timed(() => on.shell_run({ commands: ['true'] }))),
        async () => tOff.push(await timed(() => off.shell_run({ commands: ['true'] }))),
      ])
    }
    const k = `${files.toLocaleString('en')} files`
    report(`raw spawn bash -c true (${k} in the root; min–median–max)`, `${spread(raw)} ms`)
    report(`shell_run(["true"]), changes observed`, `${spread(tOn)} ms`)
    report(`shell_run(["true"]), changes off`, `${spread(tOff)} ms`)
    const target = files === 10_000 ? 1.3 : 1.5
    report('  ratio observed / raw (medians)', `${(median(tOn) / median(raw)).toFixed(2)}x`, check(median(tOn) / median(raw) <= target, `≤ ${target}x`))
    report('  ratio observed / changes off (medians)', `${(median(tOn) / median(tOff)).toFixed(2)}x`)
  }

  // 2. 20,000 small files made by one command, observed against off, rounds interleaved, on tmpfs
  // (/dev/shm, where no disk hides the per-call price) and on disk (the tmpdir): in a directory the
  // command makes first (the relay records its files as new without looking), and in one that stood
  // before it (each file looked at). The files are removed by a second command of the same call,
  // timed apart. The floor's rounds run the same script by a plain spawn, with and without the
  // do-nothing supervisor, in the same turns.
  const floor = buildFixture(floorDir, 'notify-floor')
  const python = (dir: string) => `python3 -c "import os\nfor i in range(20000):\n  open(os.path.join('${dir}', str(i)), 'w').write('x')"`
  for (const [where, base] of isToolsOnly || isRaceOnly
    ? []
    : (
        [
          ['tmpfs', '/dev/shm'],
          ['disk', tmpdir()],
        ] as const
      ).filter(([where]) => where === 'tmpfs' || !process.env.BENCH_EFFECTS_TMPFS_ONLY)) {
    const root = realpathSync(mkdtempSync(join(base, 'hands-bench-effects-burst-')))
    const on = createShellRuntime({ roots: [root] })
    const off = createShellRuntime({ roots: [root], changes: false })
    made.push({ root, rts: [on, off] })
    const fanotify = floor === null ? null : buildFanotifyFloor(floorDir, root)
    for (const dirIs of ['made by the command', 'standing before'] as const) {
      const isMade = dirIs === 'made by the command'
      const make = {
        on: [] as number[],
        off: [] as number[],
        direct: [] as number[],
        floor: [] as number[],
        fanotify: [] as number[],
        resolved: [] as number[],
      }
      const remove = { on: [] as number[], off: [] as number[] }
      let counted = -1
      const fanotifySaid = { fanotify: '', resolved: '' }
      const burst = (dir: string) => `${isMade ? `mkdir ${dir} && ` : ''}${python(dir)}`
      /** The directory round `r` of `mode` makes its files in (made beforehand when it is to stand before). */
      const dirOf = (mode: keyof typeof make, r: number) => {
        const dir = `${mode}-${r}-${isMade ? 'made' : 'old'}`
        if (!isMade) mkdirSync(join(root, dir))
        return dir
      }
      const steps = (r: number) => [
        ...(['on', 'off'] as const).map((mode) => async () => {
          const dir = dirOf(mode, r)
          const result = await (mode === 'on' ? on : off).shell_run({ commands: [burst(dir), `rm -rf ${dir}`] })
          if (result.exit !== 0) throw new Error(result.commands.map((c) => c.stderr).join('\n'))
          if (mode === 'on') counted = result.commands[0]?.changes.counts.created ?? -1
          make[mode].push(result.commands[0]?.duration_ms ?? 0)
          remove[mode].push(result.commands[1]?.duration_ms ?? 0)
        }),
        ...(floor === null ? [] : (['direct', 'floor', ...(fanotify === null ? [] : (['fanotify', 'resolved'] as const))] as const)).map((mode) => async () => {
          const dir = dirOf(mode, r)
          const prefix = { direct: [], floor: [floor as string], fanotify: [fanotify as string, root], resolved: [fanotify as string, '--resolve', root] }[mode]
          make[mode].push(
            await timed(async () => {
              const said = await rawSpawn(burst(dir), undefined, { cwd: root, prefix })
              if (mode === 'fanotify' || mode === 'resolved') fanotifySaid[mode] = said.trim().replace(/^fanotify-floor: /, '')
            }),
          )
          rmSync(join(root, dir), { recursive: true })
        }),
      ]
      for (let r = 0; r < 7; r++) await inTurn(r, steps(r))
      const ratio = median(make.on) / median(make.off)
      const floorRatio = floor === null ? null : median(make.floor) / median(make.direct)
      report(`20,000 files made, ${where} (${base}), dir ${dirIs}, changes off (ms)`, spread(make.off, 0))
      report(`20,000 files made, ${where}, dir ${dirIs}, changes observed (ms)`, spread(make.on, 0))
      report(
        '  ratio observed / off (medians)',
        `${ratio.toFixed(2)}x`,
        floorRatio === null
          ? '(no floor: no C compiler)'
          : `${check(ratio <= floorRatio + 0.1, 'within 0.1x of the floor')}; floor here ${floorRatio.toFixed(2)}x`,
      )
      if (floorRatio !== null) {
        report('  the same run directly (bash -c), no observer (ms)', spread(make.direct, 0))
        report('  run directly under a supervisor answering at once (ms)', spread(make.floor, 0))
        report('  the floor: that supervisor / directly (medians)', `${floorRatio.toFixed(2)}x`)
      }
      if (fanotify !== null) {
        report('  run directly under a fanotify watch, drained every 5 ms (ms)', spread(make.fanotify, 0))
        report('  fanotify, for comparison: watched / directly (medians)', `${(median(make.fanotify) / median(make.direct)).toFixed(2)}x`)
        console.log(`  (its last round: ${fanotifySaid.fanotify})`)
        report('  the same watch, the reader naming and keeping each path (ms)', spread(make.resolved, 0))
        report('  fanotify naming paths: watched / directly (medians)', `${(median(make.resolved) / median(make.direct)).toFixed(2)}x`)
        console.log(`  (its last round: ${fanotifySaid.resolved})`)
      }
      report(`then removed (rm -rf), off / observed (ms)`, `${spread(remove.off, 0)} / ${spread(remove.on, 0)}`)
      report('  ratio observed / off (medians)', `${(median(remove.on) / median(remove.off)).toFixed(2)}x`)
      const expected = isMade ? '20001, the directory and its files' : '20000, the files'
      console.log(`  (the account of the last observed round: ${counted} created; expected ${expected})`)
    }
  }

  // 3. Everyday tools, on tmpfs, observed against off, each with its targets and floor, rounds in
  // turn: tar -xf of 20,000 files (it creates each, then sets its times, owner and mode through the
  // descriptor), git clone of 5,000 (through the git transport, not by linking objects), cp -r of
  // 10,000, an npm install of 40 local packages of 50 files each (offline, from tarballs). Under
  // Landlock the guard sends metadata calls to the relay with the record off too, so the floor of
  // what observing adds is the do-nothing supervisor of every recorded call against one of the
  // metadata calls alone (notify-floor --metadata-only); without the guard, against a plain run.
  if (!isRaceOnly && (!process.env.BENCH_EFFECTS_BURST_ONLY || isToolsOnly)) await everydayTools(floor, made)
  if (!isToolsOnly) await race(made)
} finally {
  rmSync(floorDir, { recursive: true, force: true })
  for (const { root, rts } of made) {
    await Promise.all(rts.map((rt) => rt.close()))
    rmSync(root, { recursive: true, force: true })
  }
}

/** Section 3: everyday tools on tmpfs, observed / off, with targets and floors (see above). */
async function everydayTools(floor: string | null, made: Array<{ root: string; rts: ShellRuntime[] }>): Promise<void> {
  const root = realpathSync(mkdtempSync(join('/dev/shm', 'hands-bench-effects-tools-')))
  const tools = { on: createShellRuntime({ roots: [root] }), off: createShellRuntime({ roots: [root], changes: false }) }
  made.push({ root, rts: [tools.on, tools.off] })
  const isGuarded = tools.on.confinement.kind === 'landlock'
  const tree = (dir: string, dirs: number) => {
    for (let d = 0; d < dirs; d++) {
      mkdirSync(join(root, dir, `d${d}`), { recursive: true })
      for (let f = 0; f < 100; f++) writeFileSync(join(root, dir, `d${d}`, `f${f}.txt`), `${d} ${f}\n`)
    }
  }
  const sh = (script: string) => {
    const r = spawnSync('bash', ['-c', script], { cwd: root, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: root } })
    if (r.status !== 0) throw new Error(`${script}: ${r.stderr}`)
  }
  tree('src20k', 200)
  sh('tar -cf src.tar -C src20k .')
  tree('src10k', 100)
  tree('repo', 50)
  sh('cd repo && git init -q && git add -A && git -c user.name=b -c user.email=b@b commit -qm files')
  // 40 packages of 50 files, packed as npm packs them (a package/ directory), and a project needing them all.
  const deps: Record<string, string> = {}
  for (let p = 0; p < 40; p++) {
    const dir = join(root, 'pkgs', `p${p}`, 'package')
    mkdirSync(join(dir, 'lib'), { recursive: true })
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `p${p}`, version: '1.0.0' }))
    for (let f = 0; f < 49; f++) writeFileSync(join(dir, 'lib', `m${f}.js`), `module.exports = ${f}\n`)
    sh(`tar -czf pkgs/p${p}.tgz -C pkgs/p${p} package`)
    deps[`p${p}`] = `file:../pkgs/p${p}.tgz`
  }
  writeFileSync(join(root, 'project.json'), JSON.stringify({ name: 'project', version: '1.0.0', dependencies: deps }))
  const npm = (dir: string) =>
    `mkdir ${dir} && cp project.json ${dir}/package.json && cd ${dir} && npm install --offline --no-audit --no-fund --ignore-scripts --loglevel=error --cache=../npm-cache >/dev/null`
  sh(npm('npm-warm'))
  const env = 'export HOME=$PWD GIT_CONFIG_NOSYSTEM=1; '
  const rows = [
    { tool: 'tar -xf of 20,000 files', target: 2, command: (dir: string) => `mkdir ${dir} && tar -xf src.tar -C ${dir}` },
    { tool: 'git clone of 5,000 files', target: 1.3, command: (dir: string) => `${env}git clone -q --no-local repo ${dir}` },
    { tool: 'cp -r of 10,000 files', target: 1.3, command: (dir: string) => `cp -r src10k ${dir}` },
    { tool: 'npm install, 40 packages of 50 files', target: 1.1, command: (dir: string) => `${env}${npm(dir)}` },
  ]
  const only = process.env.BENCH_EFFECTS_TOOL
  for (const { tool, target, command } of rows.filter((r) => only === undefined || r.tool.startsWith(only))) {
    const took = { on: [] as number[], off: [] as number[], direct: [] as number[], floor: [] as number[], metadata: [] as number[] }
    let counted = -1
    const steps = (r: number) => [
      ...(['on', 'off'] as const).map((mode) => async () => {
        const dir = `${mode}-${r}`
        const result = await tools[mode].shell_run({ commands: [command(dir), `rm -rf ${dir}`] })
        if (result.exit !== 0) throw new Error(result.commands.map((c) => c.stderr).join('\n'))
        if (mode === 'on') counted = result.commands[0]?.changes.counts.created ?? -1
        took[mode].push(result.commands[0]?.duration_ms ?? 0)
      }),
      ...(floor === null ? [] : (['direct', 'floor', 'metadata'] as const)).map((mode) => async () => {
        const dir = `${mode}-${r}`
        const prefix = { direct: [], floor: [floor as string], metadata: [floor as string, '--metadata-only'] }[mode]
        took[mode].push(await timed(() => rawSpawn(command(dir), undefined, { cwd: root, prefix })))
        rmSync(join(root, dir), { recursive: true })
      }),
    ]
    for (let r = 0; r < 7; r++) await inTurn(r, steps(r))
    const ratio = median(took.on) / median(took.off)
    report(`${tool}, tmpfs, changes off / observed (ms)`, `${spread(took.off, 0)} / ${spread(took.on, 0)}`)
    let verdict = `${check(ratio <= target, `≤ ${target}x`)}`
    if (floor !== null) {
      const base = isGuarded ? took.metadata : took.direct
      const floorRatio = median(took.floor) / median(base)
      verdict += `; floor here ${floorRatio.toFixed(2)}x`
      if (ratio > target && floorRatio > target) verdict += ' (the target lies below the floor)'
      report(
        `  floor: every recorded call supervised / ${isGuarded ? 'metadata calls alone (the guard)' : 'none'} (ms)`,
        `${spread(took.floor, 0)} / ${spread(base, 0)}`,
      )
    }
    report('  ratio observed / off (medians)', `${ratio.toFixed(2)}x`, verdict)
    console.log(`  (the account of the last observed round: ${counted} created)`)
  }
}

/**
 * Section 4: the declared race. fixtures/effects-race.c creates 400 files while its second thread
 * flips the first byte of the name between the relay's read and the kernel's; the files it made
 * that the account does not hold are the race's hits (the account says complete for them: the
 * confinement summary declares this, see docs/effects.md).
 */
async function race(made: Array<{ root: string; rts: ShellRuntime[] }>): Promise<void> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'hands-bench-effects-race-')))
  made.push({ root, rts: [] })
  const bin = buildFixture(root, 'effects-race')
  if (bin === null) return
  for (const confine of ['landlock', 'bwrap'] as const) {
    let rt: ShellRuntime
    try {
      rt = createShellRuntime({ roots: [root], confine })
    } catch (e) {
      console.log(`(no race row under ${confine}: ${(e as Error).message.split('\n')[0]})`)
      continue
    }
    made.at(-1)?.rts.push(rt)
    const missed: number[] = []
    for (let r = 0; r < 7; r++) {
      const dir = `${confine}-${r}`
      mkdirSync(join(root, dir))
      const result = await rt.shell_run({ cwd: join(root, dir), commands: ['../effects-race 400'] })
      const changes = result.commands[0]?.changes
      if (result.exit !== 0 || changes === undefined) throw new Error(`effects-race: ${result.commands[0]?.stderr}`)
      missed.push(400 - changes.counts.created)
    }
    report(`race: files of 400 missed, ${confine} (min–median–max)`, spread(missed, 0), '(declared)')
  }
}
