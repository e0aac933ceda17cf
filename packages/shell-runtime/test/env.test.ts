import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { captureLoginEnvironment } from '../src/index.ts'
import { jobProcesses, logsUntil, makeRuntime, tempDir } from './helpers.ts'

function profileHome(profile: string): string {
  const home = tempDir('home')
  mkdirSync(join(home, 'profile-bin'))
  writeFileSync(join(home, 'profile-bin', 'hello-from-profile'), '#!/bin/sh\necho "hello from the profile PATH"\n')
  chmodSync(join(home, 'profile-bin', 'hello-from-profile'), 0o755)
  writeFileSync(join(home, '.bash_profile'), profile)
  return home
}

const PROFILE = `echo "noise the profile prints"
export PATH="$HOME/profile-bin:$PATH"
export PROFILE_ONLY=set-by-profile
echo ran >> "$HOME/profile-ran"
`

function hostEnv(home: string): Record<string, string> {
  return { HOME: home, PATH: process.env['PATH'] ?? '/usr/bin:/bin', USER: 'tester', LANG: 'C.UTF-8', MY_API_KEY: 'sk-secret', EXTRA_OK: 'passed' }
}

describe('login environment', () => {
  it('is captured once from a login shell, so a PATH entry the profile adds is visible to every command', async () => {
    const home = profileHome(PROFILE)
    // The profile records each run in HOME, which confined commands may write only when the host allows it.
    const { rt } = makeRuntime({ hostEnv: hostEnv(home), allowWrite: [home] })
    const r = await rt.shell_run({ commands: ['hello-from-profile', 'echo "$HOME|$USER|$LANG"'] })
    expect(r.commands[0]).toMatchObject({ exit: 0, stdout: 'hello from the profile PATH\n' })
    expect(r.commands[1]?.stdout).toBe(`${home}|tester|C.UTF-8\n`)
    await rt.shell_run({ commands: ['true'] })
    const b = await rt.shell_background({ commands: ['hello-from-profile'] })
    await logsUntil(rt, b.id, (l) => l.includes('hello from the profile PATH'))
    // The profile ran once for all of these commands.
    expect(readFileSync(join(home, 'profile-ran'), 'utf8')).toBe('ran\n')
    const env = await rt.loginEnvironment()
    expect(env.source).toBe('login')
    expect(env.env['PATH']?.startsWith(`${home}/profile-bin:`)).toBe(true)
  })

  it('is captured again on refresh, and later commands see the new profile', async () => {
    const home = profileHome(PROFILE)
    const { rt } = makeRuntime({ hostEnv: hostEnv(home), allowWrite: [home] })
    await rt.shell_run({ commands: ['true'] })
    writeFileSync(join(home, '.bash_profile'), `${PROFILE}export PATH="$HOME/second:$PATH"\n`)
    await rt.refreshLoginEnvironment()
    const r = await rt.shell_run({ commands: ['echo "$PATH"'] })
    expect(r.commands[0]?.stdout.startsWith(`${home}/second:${home}/profile-bin:`)).toBe(true)
    expect(readFileSync(join(home, 'profile-ran'), 'utf8')).toBe('ran\nran\n')
  })

  it('passes only the allowlist: a host secret is invisible unless the host allows it by name', async () => {
    const home = profileHome(PROFILE)
    const { rt } = makeRuntime({ hostEnv: hostEnv(home) })
    const r = await rt.shell_run({ commands: ['echo "[${MY_API_KEY-}][${EXTRA_OK-}][${PROFILE_ONLY-}]"', 'env | grep -c sk-secret'] })
    expect(r.commands[0]?.stdout).toBe('[][][]\n')
    expect(r.commands[1]?.stdout).toBe('0\n')
    const b = await rt.shell_background({ commands: ['echo "bg [${MY_API_KEY-}]"'] })
    expect(await logsUntil(rt, b.id, (l) => l.length > 0)).toEqual(['bg []'])

    const { rt: allowed } = makeRuntime({ hostEnv: hostEnv(home), envAllow: ['EXTRA_OK', 'PROFILE_*'] })
    const a = await allowed.shell_run({ commands: ['echo "[${MY_API_KEY-}][${EXTRA_OK-}][${PROFILE_ONLY-}]"'] })
    expect(a.commands[0]?.stdout).toBe('[][passed][set-by-profile]\n')
  })

  it('passes the locale variables by their names only: LC_ALL and LC_PAPER pass, LC_MY_TOKEN does not', async () => {
    const home = profileHome('')
    const { rt } = makeRuntime({ hostEnv: { ...hostEnv(home), LC_ALL: 'C.UTF-8', LC_PAPER: 'C', LC_MY_TOKEN: 'sk-looks-like-a-locale' } })
    const r = await rt.shell_run({ commands: ['echo "[${LC_ALL-}][${LC_PAPER-}][${LC_MY_TOKEN-}]"; env | grep -c sk-looks-like-a-locale'] })
    expect(r.commands[0]?.stdout).toBe('[C.UTF-8][C][]\n0\n')
    const b = await rt.shell_background({ commands: ['echo "bg [${LC_MY_TOKEN-}]"'] })
    expect(await logsUntil(rt, b.id, (l) => l.length > 0)).toEqual(['bg []'])
  })

  it('falls back to the host allowlist when the login shell fails, and says why', async () => {
    const home = profileHome('echo broken >&2; exit 3\n')
    const { rt } = makeRuntime({ hostEnv: hostEnv(home) })
    const r = await rt.shell_run({ commands: ['echo "$HOME"'] })
    expect(r.commands[0]?.stdout).toBe(`${home}\n`)
    const env = await rt.loginEnvironment()
    expect(env.source).toBe('host')
    expect(env.error).toContain('broken')
    expect(env.env['MY_API_KEY']).toBeUndefined()
  })

  it('is captured once outside any session and shared: runtimes given it run no login shell of their own', async () => {
    const home = profileHome(PROFILE)
    const captured = await captureLoginEnvironment({ roots: [home], hostEnv: hostEnv(home), envAllow: ['PROFILE_*'] })
    expect(captured).toMatchObject({ source: 'login', error: null })
    expect(captured.env['PROFILE_ONLY']).toBe('set-by-profile')
    let asked = 0
    const loginEnv = async () => {
      asked++
      return captured
    }
    const runtimes = [1, 2, 3].map(() => makeRuntime({ hostEnv: hostEnv(home), loginEnv }).rt)
    for (const rt of runtimes) {
      const r = await rt.shell_run({ commands: ['hello-from-profile', 'echo "[${PROFILE_ONLY-}]"'] })
      expect(r.commands[0]?.stdout).toBe('hello from the profile PATH\n')
      expect(r.commands[1]?.stdout).toBe('[]\n')
    }
    // The capture's own runtime ran the profile; none of the three did.
    expect(readFileSync(join(home, 'profile-ran'), 'utf8')).toBe('ran\n')
    expect(asked).toBe(3)
    const allowed = makeRuntime({ hostEnv: hostEnv(home), loginEnv, envAllow: ['PROFILE_*'] }).rt
    expect((await allowed.shell_run({ commands: ['echo "[${PROFILE_ONLY-}]"'] })).commands[0]?.stdout).toBe('[set-by-profile]\n')
  })

  it('stops a login-environment capture when asked, leaving nothing behind and reporting the host environment', async () => {
    const home = profileHome('sleep 30\n')
    const stop = new AbortController()
    const started = performance.now()
    const capture = captureLoginEnvironment({ roots: [home], hostEnv: hostEnv(home) }, stop.signal)
    setTimeout(() => stop.abort(), 300)
    const env = await capture
    expect(performance.now() - started).toBeLessThan(10_000)
    expect(env.source).toBe('host')
    expect(env.env['HOME']).toBe(home)
    expect(env.env['MY_API_KEY']).toBeUndefined()
    expect(jobProcesses()).toEqual([])
    expect(await captureLoginEnvironment({ roots: [home], hostEnv: hostEnv(home) }, stop.signal)).toMatchObject({
      source: 'host',
      error: expect.stringContaining('stopped'),
    })
  })
})
