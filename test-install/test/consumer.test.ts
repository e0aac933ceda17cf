import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { consumerEnv, run, stopRunning } from '../src/npm.ts'
import { PUBLISHED, REPO } from '../src/packages.ts'
import { startRegistry, type Registry } from '../src/registry.ts'

const fixtures = join(import.meta.dirname, '..', 'fixtures')
// Outside the workspace: nothing here can resolve the workspace's node_modules.
const work = realpathSync(mkdtempSync(join(tmpdir(), 'hands-consumer-')))
const project = join(work, 'project')
const root = join(work, 'root')
let registry: Registry
/** The consumer's `tsc` run, started once the project is installed; it runs while the other checks do. */
let typeCheck: Promise<Error | null>
const versionOf = (name: string) => (JSON.parse(readFileSync(join(REPO, 'packages', name, 'package.json'), 'utf8')) as { version: string }).version
const MCP_SDK = '@modelcontextprotocol/sdk'
/** The MCP SDK the workspace builds and tests with (its lockfile pin). */
const mcpPinned = (
  JSON.parse(readFileSync(join(REPO, 'packages', 'surface', 'node_modules', ...MCP_SDK.split('/'), 'package.json'), 'utf8')) as { version: string }
).version
/** A newer patch than that, which the app already has: published to the test registry as the pinned SDK with its version bumped. */
const mcpNewer = mcpPinned.replace(/\d+$/, (patch) => String(Number(patch) + 1))
/** The SDK majors a team installs today, beside hands. */
const SDKS = ['openai@^7', 'ai@^7', '@anthropic-ai/sdk@^1']

/**
 * Publish the pinned MCP SDK and a newer patch of it (the same files, version bumped) to the test
 * registry, as if the SDK had shipped a patch after hands was built. Both come from the public
 * tarball of the pinned version; its `publishConfig` is dropped, since it names the public registry.
 */
async function publishMcpSdk(publishRc: string): Promise<void> {
  const dir = join(work, 'mcp-sdk')
  mkdirSync(dir)
  const { stdout } = await run('npm', ['pack', `${MCP_SDK}@${mcpPinned}`, '--json', '--ignore-scripts'], { cwd: dir })
  const [packed] = JSON.parse(stdout) as Array<{ filename: string }>
  await run('tar', ['-xzf', join(dir, packed?.filename ?? ''), '-C', dir])
  const manifestPath = join(dir, 'package', 'package.json')
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, unknown>
  delete manifest['publishConfig']
  for (const version of [mcpPinned, mcpNewer]) {
    writeFileSync(manifestPath, JSON.stringify({ ...manifest, version }, null, 2))
    await run('npm', ['publish', join(dir, 'package'), '--ignore-scripts', '--tag', version === mcpNewer ? 'latest' : 'pinned', '--userconfig', publishRc], {
      cwd: work,
    })
  }
}

/** The ```ts blocks of a Markdown file, in order. */
const codeBlocks = (markdown: string) => [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? '')

/** Live processes whose command line or working directory is under `dir`, but for the consumer's own tsc. */
function processesUnder(dir: string): string[] {
  const found: string[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ')
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      if (/\) [ZX] /.test(stat)) continue
      let cwd = ''
      try {
        cwd = readlinkSync(`/proc/${entry}/cwd`)
      } catch {
        // another user's process
      }
      if ((cmd.includes(dir) || cwd.startsWith(dir)) && !cmd.includes('/typescript/bin/tsc')) found.push(`${entry} ${cmd}`)
    } catch {
      // exited while we looked
    }
  }
  return found
}

async function noneLeft(dir: string): Promise<string[]> {
  for (let i = 0; i < 300; i++) {
    const left = processesUnder(dir)
    if (left.length === 0) return left
    await new Promise((r) => setTimeout(r, 100))
  }
  return processesUnder(dir)
}

beforeAll(async () => {
  const setupStarted = performance.now()
  mkdirSync(project)
  mkdirSync(root)
  writeFileSync(join(root, 'marker.txt'), 'x')
  registry = await startRegistry(join(work, 'registry'))
  const tarballs = inject('tarballs')
  const publishRc = join(work, 'publish.npmrc')
  const host = registry.url.replace(/^http:/, '')
  writeFileSync(publishRc, `@hands:registry=${registry.url}\n@modelcontextprotocol:registry=${registry.url}\n${host}:_authToken=${registry.token}\n`)
  for (const name of PUBLISHED) await run('npm', ['publish', tarballs[name], '--userconfig', publishRc], { cwd: work })
  await publishMcpSdk(publishRc)
  console.log(`registry started and packages published: ${((performance.now() - setupStarted) / 1000).toFixed(1)} s`)
  // The project maps the @hands scope to the team's registry (and, here, the MCP SDK's scope, so
  // the newer patch exists); everything else comes from the normal registry.
  writeFileSync(join(project, '.npmrc'), `@hands:registry=${registry.url}\n@modelcontextprotocol:registry=${registry.url}\n`)
  writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'consumer', private: true, type: 'module' }, null, 2)}\n`)
  // The app has the newer MCP SDK patch already; then it adds hands and today's SDK majors, with no --legacy-peer-deps.
  await run('npm', ['install', `${MCP_SDK}@${mcpNewer}`], { cwd: project })
  const started = performance.now()
  await run('npm', ['install', '@hands/surface', '@types/node@20', '@types/json-schema', ...SDKS], { cwd: project })
  console.log(`npm install through the registry: ${((performance.now() - started) / 1000).toFixed(1)} s`)
  copyFileSync(join(fixtures, 'use-surface.mjs'), join(project, 'use-surface.mjs'))
  copyFileSync(join(fixtures, 'check-types.ts'), join(project, 'check-types.ts'))
  copyFileSync(join(fixtures, 'tsconfig.json'), join(project, 'tsconfig.json'))
  // The four agent loops of the adapters page, as the installed package ships it.
  mkdirSync(join(project, 'adapter-loops'))
  codeBlocks(readFileSync(join(project, 'node_modules', '@hands', 'surface', 'docs', 'adapters.md'), 'utf8')).forEach((block, i) => {
    writeFileSync(join(project, 'adapter-loops', `loop-${i + 1}.ts`), block)
  })
  const tsc = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc')
  typeCheck = run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project }).then(
    () => null,
    (e: Error) => e,
  )
})

afterAll(async () => {
  // A set-up that timed out leaves its npm install running: end it, or it outlives the run.
  stopRunning()
  await typeCheck
  const pid = registry?.pid
  await registry?.stop()
  if (pid !== undefined) expect(processesUnder(work)).toEqual([])
  rmSync(work, { recursive: true, force: true })
})

type Outcome = { ok: boolean; result?: Record<string, unknown>; error?: Record<string, unknown> }

/** The first command's stdout of a shell_run outcome. */
const firstStdout = (o: Outcome) => (o.result?.['commands'] as Array<{ stdout: string }> | undefined)?.[0]?.stdout

async function useSurface(): Promise<{ run: Outcome; exists: Outcome; background: Outcome }> {
  const { stdout } = await run(process.execPath, ['use-surface.mjs', root], { cwd: project })
  return JSON.parse(stdout)
}

/** `npx hands serve --root <root>` over stdio, run by `wrapper` (a command and its arguments) when given. */
async function serve(wrapper: string[] = []) {
  const argv = [...wrapper, 'npx', '--no', 'hands', 'serve', '--root', root]
  const transport = new StdioClientTransport({
    command: argv[0] as string,
    args: argv.slice(1),
    cwd: project,
    env: consumerEnv() as Record<string, string>,
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString()
  })
  const client = new Client({ name: 'consumer-test', version: '0.0.0' })
  await client.connect(transport)
  return { client, stderr: () => stderr }
}

function meta(r: unknown): Record<string, unknown> {
  return ((r as CallToolResult)._meta?.['hands/error'] ?? {}) as Record<string, unknown>
}

describe('a project outside the workspace that installed @hands/surface from a registry', () => {
  it('installed every @hands package from the registry the scope is mapped to', () => {
    const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8')) as { packages: Record<string, { resolved?: string; version?: string }> }
    for (const name of PUBLISHED) {
      const entry = lock.packages[`node_modules/@hands/${name}`]
      expect(entry?.version).toBe(versionOf(name))
      expect(entry?.resolved ?? '').toContain(registry.url)
    }
    // Everything else came from the registry the project normally uses.
    for (const name of ['typebox', 'node-pty', 'openai', 'ai']) {
      const resolved = lock.packages[`node_modules/${name}`]?.resolved ?? ''
      expect(resolved).toMatch(/^https:\/\//)
      expect(resolved).not.toContain(registry.url)
    }
    expect(lock.packages['node_modules/node-pty']?.version).toBeDefined()
  })

  it('installed today’s SDK majors beside hands with no peer conflict, and their types check the four adapter loops of the shipped docs', async () => {
    const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> }
    expect(['openai', 'ai', '@anthropic-ai/sdk'].map((n) => lock.packages[`node_modules/${n}`]?.version?.split('.')[0])).toEqual(['7', '7', '1'])
    expect(readdirSync(join(project, 'adapter-loops')).sort()).toEqual(['loop-1.ts', 'loop-2.ts', 'loop-3.ts', 'loop-4.ts'])
    const failed = await typeCheck
    if (failed !== null) throw failed
  })

  it('keeps one copy of the MCP SDK: the newer patch the app had, which hands’ range admits', () => {
    const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; resolved?: string }> }
    const copies = Object.entries(lock.packages).filter(([path]) => path.endsWith(`node_modules/${MCP_SDK}`))
    expect(copies.map(([path, entry]) => [path, entry.version])).toEqual([[`node_modules/${MCP_SDK}`, mcpNewer]])
    const surface = JSON.parse(readFileSync(join(project, 'node_modules', '@hands', 'surface', 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>
    }
    expect(surface.dependencies[MCP_SDK]).toBe(`^${mcpPinned}`)
  })

  it('imports createSurface on plain node, runs shell_run and file_exists, starts a background shell and closes', async () => {
    const r = await useSurface()
    expect(r.run.ok).toBe(true)
    expect(firstStdout(r.run)).toBe('hi\n')
    expect(r.exists.result).toEqual({
      paths: [
        { path: 'marker.txt', is_exists: true },
        { path: 'missing.txt', is_exists: false },
      ],
    })
    expect(r.background).toMatchObject({ ok: true, result: { status: 'running' } })
    expect(await noneLeft(root)).toEqual([])
  })

  it('npx hands tools lists the ten tools', async () => {
    const { stdout } = await run('npx', ['--no', 'hands', 'tools'], { cwd: project })
    // The table ends at its total line; how commands are confined follows it.
    const all = stdout.trim().split('\n')
    const lines = all.slice(0, all.findIndex((l) => l.startsWith('total ')) + 1)
    expect(lines.slice(0, -1).map((l) => l.split(/\s+/)[0])).toEqual([
      'shell_run',
      'shell_background',
      'shell_logs',
      'shell_type',
      'shell_stop',
      'copy',
      'move',
      'delete',
      'create_directory',
      'file_exists',
    ])
    expect(lines.at(-1)).toMatch(/^total\s+\d+\s+10 of 10 tools/)
    // The helper shipped prebuilt in @hands/sandbox confines commands with no compiler at install.
    expect(all.slice(lines.length).join('\n')).toMatch(/landlock/i)
  })

  it('npx hands serve answers initialize and tools/call over stdio, and exits when stdin closes', async () => {
    const { client, stderr } = await serve()
    expect(client.getServerVersion()).toMatchObject({ name: 'hands', version: versionOf('surface') })
    const exists = await client.callTool({ name: 'file_exists', arguments: { paths: ['marker.txt'] } })
    expect(exists.structuredContent).toEqual({ paths: [{ path: 'marker.txt', is_exists: true }] })
    const ran = await client.callTool({ name: 'shell_run', arguments: { commands: ['echo hi'] } })
    expect((ran.structuredContent as { commands: Array<{ stdout: string }> }).commands[0]?.stdout).toBe('hi\n')
    await client.close()
    expect(stderr()).toContain('stdin closed')
    expect(stderr()).not.toContain('background shells are unavailable')
    expect(await noneLeft(project)).toEqual([])
  })

  it('copies and deletes a 3,000-file tree through the installed server, by the hands helper the installed package ships', async () => {
    for (let d = 0; d < 30; d++) {
      mkdirSync(join(root, 'big', `d${d}`), { recursive: true })
      for (let f = 0; f < 100; f++) writeFileSync(join(root, 'big', `d${d}`, `f${f}.txt`), `${d}-${f}\n`)
    }
    // Which programs the server ran, as the kernel saw them: the helper's tree modes are not in any
    // result. (--seccomp-bpf: only execve stops the traced processes, not every call of the copy.)
    const log = join(work, 'execve.log')
    const { client } = await serve(['strace', '-f', '-qq', '--seccomp-bpf', '-e', 'trace=execve', '-o', log])
    const copied = await client.callTool({ name: 'copy', arguments: { src: 'big', dest: 'big-copy' } })
    expect(copied.isError ?? false).toBe(false)
    const copies = readdirSync(join(root, 'big-copy'), { recursive: true }).filter((p) => String(p).endsWith('.txt'))
    expect(copies).toHaveLength(3000)
    expect(readFileSync(join(root, 'big-copy', 'd29', 'f99.txt'), 'utf8')).toBe('29-99\n')
    const deleted = await client.callTool({ name: 'delete', arguments: { paths: ['big', 'big-copy'] } })
    expect(deleted.structuredContent).toEqual({
      paths: [
        { path: 'big', is_deleted: true },
        { path: 'big-copy', is_deleted: true },
      ],
    })
    expect(readdirSync(root)).toEqual(['marker.txt'])
    await client.close()
    expect(await noneLeft(project)).toEqual([])
    const helper = join(project, 'node_modules', '@hands', 'sandbox', 'native', 'bin', `linux-${process.arch}`, 'hands-confine')
    const treeRuns = readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => /execve\(.*"--(copy|remove)-tree"/.test(l))
    expect(treeRuns.some((l) => l.includes(`execve("${helper}"`) && l.includes('"--copy-tree"'))).toBe(true)
    expect(treeRuns.some((l) => l.includes(`execve("${helper}"`) && l.includes('"--remove-tree"'))).toBe(true)
  })

  describe('with node-pty’s native binary removed', () => {
    beforeAll(() => {
      const pty = join(project, 'node_modules', 'node-pty')
      for (const dir of ['build', 'prebuilds']) rmSync(join(pty, dir), { recursive: true, force: true })
    })

    it('still imports, shell_run and file_exists work, and shell_background returns pty_unavailable', async () => {
      const r = await useSurface()
      expect(firstStdout(r.run)).toBe('hi\n')
      expect(r.exists.ok).toBe(true)
      expect(r.background).toMatchObject({ ok: false, error: { tool: 'shell_background', code: 'pty_unavailable', is_preflight: true } })
      expect(String(r.background.error?.['message'])).toContain('node-pty could not be loaded')
      expect(String(r.background.error?.['hint'])).toContain('shell_run')
    })

    it('hands serve starts, says once on stderr why background shells are unavailable, and serves the rest', async () => {
      const { client, stderr } = await serve()
      const bg = await client.callTool({ name: 'shell_background', arguments: { commands: ['sleep 30'] } })
      expect(bg.isError).toBe(true)
      expect(meta(bg)).toMatchObject({ code: 'pty_unavailable' })
      const ran = await client.callTool({ name: 'shell_run', arguments: { commands: ['echo hi'] } })
      expect((ran.structuredContent as { commands: Array<{ stdout: string }> }).commands[0]?.stdout).toBe('hi\n')
      await client.close()
      expect(stderr().match(/background shells are unavailable/g)).toHaveLength(1)
      expect(stderr()).toContain('npm rebuild node-pty')
      expect(await noneLeft(project)).toEqual([])
    })
  })

  // Last: the tsc started after the install has run alongside everything above.
  it('type-checks a consumer, every type from @hands/surface, under nodenext with skipLibCheck false', async () => {
    const failed = await typeCheck
    if (failed !== null) throw failed
  })
})

describe('a project outside the workspace that installed @hands/sandbox alone', () => {
  it('installs small, without node-pty, the tokenizer or the MCP SDK, and hands-sandbox confines a command there, printing its account', async () => {
    const alone = join(work, 'sandbox-alone')
    const sandboxRoot = join(work, 'sandbox-root')
    const outside = join(work, 'sandbox-outside')
    for (const d of [alone, sandboxRoot, outside]) mkdirSync(d)
    writeFileSync(join(alone, '.npmrc'), `@hands:registry=${registry.url}\n`)
    writeFileSync(join(alone, 'package.json'), `${JSON.stringify({ name: 'sandbox-alone', private: true, type: 'module' }, null, 2)}\n`)
    await run('npm', ['install', '@hands/sandbox'], { cwd: alone })
    const packages = readdirSync(join(alone, 'node_modules'))
      .filter((n) => !n.startsWith('.'))
      .flatMap((n) => (n.startsWith('@') ? readdirSync(join(alone, 'node_modules', n)).map((m) => `${n}/${m}`) : [n]))
    for (const heavy of ['node-pty', 'gpt-tokenizer', '@modelcontextprotocol/sdk', '@hands/shell-runtime', '@xterm/headless'])
      expect(packages).not.toContain(heavy)
    const { stdout: du } = await run('du', ['-sb', join(alone, 'node_modules')])
    const bytes = Number(du.split('\t')[0])
    console.log(`@hands/sandbox installed alone: ${(bytes / 1e6).toFixed(1)} MB, ${packages.length} packages (${packages.join(', ')})`)
    expect(bytes).toBeLessThan(10e6)
    const bin = join(alone, 'node_modules', '.bin', 'hands-sandbox')
    const { stdout } = await run(bin, ['--root', sandboxRoot, '--json', '--', `echo kept > kept.txt; echo x > ${outside}/escape.txt; true`], { cwd: alone })
    const account = JSON.parse(stdout) as { exit: number; stderr: string; changes: { created: string[]; is_complete: boolean } }
    expect(account.exit).toBe(0)
    expect(account.stderr).toMatch(/escape\.txt: (Permission denied|Read-only file system|No such file or directory)/)
    expect(account.changes).toMatchObject({ created: ['kept.txt'], is_complete: true })
    expect(readdirSync(outside)).toEqual([])
    expect(await noneLeft(alone)).toEqual([])
  })
})
