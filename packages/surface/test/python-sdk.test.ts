import { execFile, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { handsArgv } from './helpers/cli.ts'
import { eventually, processesMentioning } from './helpers/procs.ts'
import { tempRoot } from './helpers/tmp.ts'

const run = promisify(execFile)
/** The Python MCP SDK this test drives hands with; installed with pip into a venv of its own, kept between runs. */
const PYTHON_MCP = '2.3.0'
const VENV = join(tmpdir(), `hands-python-mcp-${PYTHON_MCP}`)
const PYTHON = join(VENV, 'bin', 'python')
const SCRIPT = join(import.meta.dirname, 'fixtures', 'python-client.py')

describe(`the Python MCP SDK ${PYTHON_MCP} client against hands serve over stdio, started in / without --root`, () => {
  const a = tempRoot()
  const b = tempRoot()

  beforeAll(() => {
    if (existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import mcp'], { timeout: 120_000 }).status === 0) return
    const venv = spawnSync('python3', ['-m', 'venv', '--clear', VENV], { encoding: 'utf8', timeout: 240_000 })
    const pip =
      venv.status === 0
        ? spawnSync(join(VENV, 'bin', 'pip'), ['install', '-q', '--retries', '0', `mcp==${PYTHON_MCP}`], { encoding: 'utf8', timeout: 600_000 })
        : venv
    if (pip.status !== 0) throw new Error(`could not install the Python MCP SDK (pip install mcp==${PYTHON_MCP}): ${pip.stderr}`)
  }, 840_000)

  afterAll(() => {
    a.remove()
    b.remove()
  })

  it('connects in auto mode (server/discover, then initialize), serves its roots and their change, and a cancelled call stops its command', async () => {
    const { INIT_CWD: _init, npm_lifecycle_event: _event, ...env } = process.env
    const { stdout } = await run(PYTHON, [SCRIPT, a.dir, b.dir, '/', ...handsArgv(['serve'])], {
      env,
      timeout: 240_000,
    })
    const seen = JSON.parse(stdout.trim().split('\n').pop() as string) as Record<string, unknown>
    expect(seen).toMatchObject({
      tools: 10,
      pwd: a.dir,
      pwd_after_change: b.dir,
      cancel: 'MCPError',
      after_cancel: 'after\n',
      never_exists: false,
    })
    expect(seen['notices']).toEqual([`roots: ${a.dir} (from the client)`, `roots: ${b.dir} (from the client)`])
    expect(await eventually(() => processesMentioning('sleep 4321').length === 0)).toBe(true)
  }, 360_000)
})
