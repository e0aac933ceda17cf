import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { connectAs, structured } from './helpers/mcp.ts'
import { eventually, isAlive, processesMentioning } from './helpers/procs.ts'
import { httpClient, serveHttpProcess } from './helpers/serve.ts'
import { tempRoot } from './helpers/tmp.ts'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.()
})

/** A command whose tree ignores SIGTERM and holds a setsid grandchild: only a stop of the whole tree ends it. */
const STUBBORN = (root: string) => `setsid sleep 1234 & trap "" TERM; seq 1 100000; touch ${join(root, 'started')}; sleep 1234`

/** Every spool file of `tmp`'s sessions whose name ends with `suffix`. */
const spoolFiles = (tmp: string, suffix: string) =>
  readdirSync(tmp)
    .filter((d) => d.startsWith('hands-shell-'))
    .flatMap((d) => readdirSync(join(tmp, d)).map((f) => join(tmp, d, f)))
    .filter((f) => f.endsWith(suffix))

/**
 * Start the stubborn command, cancel the call the way the SDK does (`notifications/cancelled`)
 * once it runs, and prove the tree is gone, the output kept and the session still serving.
 */
async function cancelAndCheck(client: Client, root: string, tmp: string): Promise<void> {
  const cancel = new AbortController()
  const pending = client.callTool({ name: 'shell_run', arguments: { commands: [STUBBORN(root), 'echo never > never'] } }, undefined, { signal: cancel.signal })
  pending.catch(() => {})
  expect(await eventually(() => existsSync(join(root, 'started')), 30_000)).toBe(true)
  // bash (its command line names it), the sleep and the setsid sleep.
  expect(processesMentioning('sleep 1234').length).toBeGreaterThanOrEqual(3)
  const at = performance.now()
  cancel.abort('the user pressed Escape')
  await expect(pending).rejects.toThrow()
  expect(await eventually(() => processesMentioning('sleep 1234').length === 0, 15_000), JSON.stringify(processesMentioning('sleep 1234'))).toBe(true)
  console.log(`notifications/cancelled → empty tree: ${(performance.now() - at).toFixed(0)} ms`)
  // Whole output on disk; the command after it never started.
  expect(await eventually(() => spoolFiles(tmp, '.stdout').some((f) => readFileSync(f, 'utf8').includes('100000\n')))).toBe(true)
  expect(existsSync(join(root, 'never'))).toBe(false)
  const next = structured<{ commands: Array<{ stdout: string; exit: number }> }>(
    await client.callTool({ name: 'shell_run', arguments: { commands: ['echo after'] } }),
  )
  expect(next.commands[0]).toMatchObject({ stdout: 'after\n', exit: 0 })
}

describe('a client cancelling a shell_run (notifications/cancelled)', () => {
  it('over stdio stops the command with its whole tree, keeps its output, and the session goes on', async () => {
    const root = tempRoot()
    const tmp = tempRoot('hands-cancel-tmp-')
    cleanups.push(root.remove, tmp.remove)
    const c = await connectAs(['--root', root.dir, '--stop-grace-ms', '300'], { env: { TMPDIR: tmp.dir } })
    cleanups.push(async () => {
      const pid = c.transport.pid
      await c.client.close()
      if (pid !== null) await eventually(() => !isAlive(pid))
    })
    await cancelAndCheck(c.client, root.dir, tmp.dir)
  }, 180_000)

  it('over HTTP does the same', async () => {
    const s = await serveHttpProcess(['--stop-grace-ms', '300'])
    cleanups.push(() => s.stop())
    const c = await httpClient(s.url)
    cleanups.push(() => c.client.close())
    await cancelAndCheck(c.client, s.root, s.tmp)
  }, 180_000)
})
