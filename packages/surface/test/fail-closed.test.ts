/**
 * The server fails closed where a container's seccomp profile refuses Landlock (imitated without an
 * engine by shell-runtime's test/fixtures/with-profile.c): it serves, says at start-up that commands
 * cannot run and why, refuses every shell call with `sandbox_unavailable` while the file tools work,
 * and refuses to start at all when a setting it was given cannot be held.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterEach, describe, expect, it } from 'vitest'
import { withProfile, type ProfileOptions } from '../../shell-runtime/test/profile.ts'
import { handsArgv } from './helpers/cli.ts'
import { envelope, REPO, structured } from './helpers/mcp.ts'
import { tempRoot } from './helpers/tmp.ts'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.()
})

/** `hands ARGS` under the profile, bubblewrap marked unavailable (an image without it). */
function hands(profile: ProfileOptions, args: string[]) {
  const [file, ...argv] = [...withProfile(profile), ...handsArgv(args)] as [string, ...string[]]
  const r = spawnSync(file, argv, { cwd: REPO, encoding: 'utf8', timeout: 120_000, env: { ...process.env, HANDS_CONFINE_UNAVAILABLE: 'bwrap' } })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe('the server under a seccomp profile that refuses Landlock', () => {
  it('serves, says why commands cannot run, refuses every shell call (sandbox_unavailable) and keeps the file tools; nothing escapes', async () => {
    const root = tempRoot()
    cleanups.push(root.remove)
    writeFileSync(join(root.dir, 'a.txt'), 'x')
    const [command, ...args] = [...withProfile({ landlock: 'ENOSYS' }), ...handsArgv(['serve', '--root', root.dir, '--no-network', '--no-attach'])] as [
      string,
      ...string[],
    ]
    const transport = new StdioClientTransport({
      command,
      args,
      cwd: REPO,
      env: { ...(process.env as Record<string, string>), HANDS_CONFINE_UNAVAILABLE: 'bwrap' },
      stderr: 'pipe',
    })
    let stderr = ''
    transport.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString()
    })
    const client = new Client({ name: 'hands-test', version: '0.0.0' }, { capabilities: {} })
    await client.connect(transport)
    cleanups.push(() => client.close())
    const outside = join(root.dir, '..', `escaped-${process.pid}`)
    const run = await client.callTool({ name: 'shell_run', arguments: { commands: [`touch ${outside}`] } })
    expect(envelope(run)).toMatchObject({ code: 'sandbox_unavailable', is_preflight: true })
    expect(String(envelope(run)['message'])).toContain('Landlock is refused by a seccomp profile on this process')
    const background = await client.callTool({ name: 'shell_background', arguments: { commands: ['sleep 100'] } })
    expect(envelope(background)).toMatchObject({ code: 'sandbox_unavailable' })
    expect(existsSync(outside)).toBe(false)
    const exists = await client.callTool({ name: 'file_exists', arguments: { paths: ['a.txt'] } })
    expect(structured(exists)).toEqual({ paths: [{ path: 'a.txt', is_exists: true }] })
    expect(stderr).toContain('hands: commands cannot run: no sandbox can confine them here (Landlock is refused by a seccomp profile')
    expect(stderr).toContain('hands: to fix: allow landlock_create_ruleset, landlock_add_rule and landlock_restrict_self')
  }, 120_000)

  it('refuses to start when a setting cannot be held: the network cut with confinement off where seccomp is refused too', () => {
    const r = hands({ landlock: 'EPERM', seccomp: 'EPERM' }, ['serve', '--confine', 'off', '--no-network', '--no-attach'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(
      'cutting the network (network: false, --no-network) cannot be held here: confinement is off, and no seccomp filter can refuse sockets',
    )
  }, 120_000)

  it('hands doctor says what is missing, that a seccomp profile refuses it and the fix, and exits 1', () => {
    const r = hands({ landlock: 'ENOSYS' }, ['doctor'])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/^kernel +Linux .*; a seccomp filter is already on this process/m)
    expect(r.stdout).toMatch(/^landlock +unavailable: Landlock is refused by a seccomp profile on this process .*; to fix: allow landlock_create_ruleset/m)
    expect(r.stdout).toContain('commands cannot run: no sandbox can confine them here')
    const fine = spawnSync(handsArgv(['doctor'])[0], handsArgv(['doctor']).slice(1), { cwd: REPO, encoding: 'utf8' })
    expect(fine.status).toBe(0)
    expect(fine.stdout).toMatch(/^landlock +ABI \d+$/m)
  }, 120_000)
})
