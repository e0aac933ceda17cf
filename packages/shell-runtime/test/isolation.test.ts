import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { BASE_ALLOWLIST, type ConfineMode } from '../src/index.ts'
import { findWritableCgroup } from '../../sandbox/src/tree/find-cgroup.ts'
import { alive, eventually, killLater, logsUntil, makeRuntime, MECHANISMS, processesWhere, tempDir } from './helpers.ts'

const confined = MECHANISMS
const everyMode: ConfineMode[] = [...confined, 'off']
const cgroup = findWritableCgroup()

/** A command that prints the environment of every ancestor it can read, up to pid 1. */
const READ_ANCESTORS = 'p=$PPID; while [ "$p" -gt 1 ]; do tr "\\0" "\\n" < /proc/$p/environ 2>/dev/null; p=$(cut -d" " -f4 /proc/$p/stat); done; true'

/** Live processes whose command line starts with `name`. */
const named = (name: string): number[] => processesWhere((cmd) => cmd.startsWith(name))

/**
 * One entry of this process's own environment as the kernel shows it in /proc (the environment
 * it started with), that no command is given: what a command would print if it could read the
 * server's environment.
 */
function serverEntry(): string {
  const entries = readFileSync('/proc/self/environ', 'latin1').split('\0')
  const entry = entries.find((e) => /^[A-Z_][A-Z0-9_]*=.{3,}$/.test(e) && !BASE_ALLOWLIST.includes(e.slice(0, e.indexOf('='))) && !e.startsWith('HANDS_'))
  if (entry === undefined) throw new Error('this process has no environment entry to look for')
  return entry
}

describe('secrets and isolation', () => {
  for (const confine of confined) {
    it(`(${confine}) no command reads the environment of the server or of any process outside its tree`, async () => {
      const entry = serverEntry()
      const { rt } = makeRuntime({ confine })
      const r = await rt.shell_run({
        commands: [
          `tr '\\0' '\\n' < /proc/$PPID/environ`,
          `tr '\\0' '\\n' < /proc/${process.pid}/environ`,
          READ_ANCESTORS,
          `head -c 1 /proc/${process.pid}/mem`,
        ],
      })
      for (const c of r.commands) expect(`${c.stdout}${c.stderr}`, c.command).not.toContain(entry)
      // Under bubblewrap the parent is the sandbox's own init, whose environment is the command's.
      if (confine === 'landlock') expect(r.commands[0]?.exit).not.toBe(0)
      expect(r.commands[1]?.exit).not.toBe(0)
      const b = await rt.shell_background({ commands: [READ_ANCESTORS, 'echo done'] })
      const lines = await logsUntil(rt, b.id, (l) => l.includes('done'))
      expect(lines.join('\n')).not.toContain(entry)
    })
  }

  it('(off) a command can read the server environment, and the note says so', async () => {
    const entry = serverEntry()
    const { rt } = makeRuntime({ confine: 'off' })
    // Its parent is the helper's relay (whose environment is the command's); the server is further up.
    const r = await rt.shell_run({ commands: [READ_ANCESTORS] })
    expect(r.commands[0]?.stdout.split('\n')).toContain(entry)
    expect(r.commands[0]?.note).toContain("read the server's environment")
  })
})

describe('processes that cannot slip out', () => {
  for (const confine of everyMode) {
    it(`(${confine}) a command that writes its pid to the parent cgroup's cgroup.procs and calls setsid does not survive shell_stop, shell_run or close`, async () => {
      if (cgroup === null) return
      // Each escapee renames itself, so the test finds it by name (a pid printed inside a sandbox's
      // pid namespace means nothing out here).
      const tag = `hands-escapee-${process.pid}-${Date.now()}`
      const escapee = (n: number) => `setsid bash -c 'echo $$ > ${cgroup.dir}/cgroup.procs; exec -a ${tag}-${n} sleep 1000' &`
      const { rt } = makeRuntime({ confine, stopGraceMs: 300 })
      expect(rt.treeKind).toBe('cgroup')
      try {
        // shell_background, then shell_stop.
        const b = await rt.shell_background({ commands: [`${escapee(1)} wait`] })
        const pid = await eventually(() => named(`${tag}-1`)[0])
        await rt.shell_stop({ id: b.id })
        expect(alive(pid)).toBe(false)
        // shell_run stops what the line left behind.
        await rt.shell_run({ commands: [`${escapee(2)} sleep 0.5`] })
        expect(named(`${tag}-2`)).toEqual([])
        // close stops a live one.
        await rt.shell_background({ commands: [`${escapee(3)} wait`] })
        const closePid = await eventually(() => named(`${tag}-3`)[0])
        await rt.close()
        expect(alive(closePid)).toBe(false)
      } finally {
        killLater(named(tag))
      }
    })
  }

  for (const confine of confined) {
    it(`(${confine}) the prelude, the spool and the log files are read-only to commands, and every job still joins its cgroup`, async () => {
      const { rt } = makeRuntime({ confine })
      const prelude = join(rt.spoolDir, 'prelude.bash')
      const before = readFileSync(prelude, 'utf8')
      const b = await rt.shell_background({ commands: ['echo logged; sleep 1000'] })
      await logsUntil(rt, b.id, (l) => l.includes('logged'))
      const log = rt.resources()[0]?.log_path as string
      const r = await rt.shell_run({
        commands: [
          `echo 'echo pwned; unset HANDS_CGROUP_PROCS' > ${prelude}`,
          `echo pwned >> ${log}`,
          `echo x > ${rt.spoolDir}/run-999.stdout`,
          `rm -f ${prelude} ${log}`,
          `cp /bin/true ${rt.spoolDir}/hands-confine`,
          'cat /proc/self/cgroup',
        ],
      })
      for (const c of r.commands.slice(0, 5)) expect(c.exit, c.command).not.toBe(0)
      expect(readFileSync(prelude, 'utf8')).toBe(before)
      expect(readFileSync(log, 'utf8')).not.toContain('pwned')
      expect(existsSync(join(rt.spoolDir, 'run-999.stdout'))).toBe(false)
      if (rt.treeKind === 'cgroup') expect(r.commands[5]?.stdout).toMatch(/^0::\/.*hands-\d+-[0-9a-f]+\/j\d+$/m)
      const again = await rt.shell_run({ commands: ['echo still confined > /etc/hands-should-not-exist'] })
      expect(again.commands[0]?.exit).not.toBe(0)
    })
  }

  it('a cwd swapped for a symlink to outside in a loop never starts a command outside, and the result names the real directory', async () => {
    const { rt, root } = makeRuntime()
    const outside = tempDir('outside')
    mkdirSync(join(root, 'a'))
    writeFileSync(join(root, 'a', 'marker'), 'inside')
    symlinkSync(outside, join(root, 'l'))
    // Swap `a` between the directory and the symlink as fast as the kernel allows.
    const swapper = spawn(
      'python3',
      ['-c', `import os\nos.chdir(${JSON.stringify(root)})\nwhile True:\n  os.rename('a', 'd'); os.rename('l', 'a'); os.rename('a', 'l'); os.rename('d', 'a')`],
      { stdio: 'ignore' },
    )
    let ran = 0
    let refused = 0
    try {
      const deadline = Date.now() + 90_000
      for (let i = 0; i < 1000 && Date.now() < deadline; i++) {
        let r
        try {
          // The kernel's view of the working directory (bash's own `pwd -P` resolves the name $PWD
          // holds at the time it runs, which the loop may have turned into the symlink since).
          r = await rt.shell_run({ cwd: 'a', commands: ['readlink /proc/$$/cwd; echo "$(cat marker)"'] })
        } catch (err) {
          refused++
          expect((err as { code?: string }).code, String(err)).toMatch(/^(outside_roots|not_found|not_a_directory|io_error)$/)
          continue
        }
        ran++
        // The checked directory itself is renamed a ↔ d by the loop, so its real path is either name;
        // the command always ran in that directory (its marker), never the outside one.
        const [where, marker] = (r.commands[0]?.stdout ?? '').split('\n')
        const names = [join(root, 'a'), join(root, 'd')]
        expect(names).toContain(r.cwd)
        expect(names, `call ${i} ran in ${where}`).toContain(where)
        expect(marker, `call ${i}`).toBe('inside')
      }
    } finally {
      swapper.kill('SIGKILL')
    }
    expect(ran + refused).toBe(1000)
    expect(ran).toBeGreaterThan(0)
  }, 240_000)
})
