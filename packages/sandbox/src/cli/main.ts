#!/usr/bin/env node
/**
 * `hands-sandbox --root DIR [options] -- CMD ARG…`: run one command confined as a hands
 * `shell_run` line is, print its output as it comes, then its exit and what it changed on disk;
 * exit with its exit code. `--json` prints one JSON object instead (exit, signal, stdout, stderr,
 * changes); `--explain` prints what confines commands here and what it refuses.
 */
import { finished } from 'node:stream/promises'
import { parseArgs } from 'node:util'
import type { Changes } from '@hands/contracts'
import type { ConfineMode } from '../confine/confiner.ts'
import { SandboxUnavailableError } from '../job/host.ts'
import { createSandbox, type SandboxOptions } from '../job/sandbox.ts'

const USAGE = `usage: hands-sandbox --root DIR [options] -- CMD [ARG...]

Run one command confined to the roots (Landlock, else bubblewrap), in a process tree of its own
that is stopped whole when it ends, and print what it changed on disk.
  --root DIR            where the command may write (repeatable); the first is its working directory
  --cwd DIR             start there instead (under a root)
  --no-network          cut every protocol
  --confine MODE        auto (default), landlock, bwrap, off (unconfined, on purpose)
  --allow-write DIR     let the command write under DIR too (repeatable)
  --allow-socket PATH   let it connect to the UNIX socket PATH, or those under it (repeatable)
  --deny-read PATH      hide PATH from it besides the secret stores (repeatable)
  --env-allow NAME      pass this variable of yours to it besides the base allowlist (repeatable)
  --json                print one JSON object: exit, signal, stdout, stderr, changes, leftovers
  --explain             print what confines commands here and what it refuses, then exit
`

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      root: { type: 'string', multiple: true },
      cwd: { type: 'string' },
      'no-network': { type: 'boolean' },
      confine: { type: 'string' },
      'allow-write': { type: 'string', multiple: true },
      'allow-socket': { type: 'string', multiple: true },
      'deny-read': { type: 'string', multiple: true },
      'env-allow': { type: 'string', multiple: true },
      json: { type: 'boolean' },
      explain: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help === true) {
    process.stdout.write(USAGE)
    return 0
  }
  const confine = values.confine ?? 'auto'
  if (!['auto', 'landlock', 'bwrap', 'off'].includes(confine)) throw new UsageError(`--confine takes auto, landlock, bwrap or off (got ${confine})`)
  const roots = values.root ?? []
  if (roots.length === 0) throw new UsageError('give at least one --root DIR: where the command may write')
  if (values.explain !== true && positionals.length === 0) throw new UsageError('give the command after --, e.g. hands-sandbox --root . -- make test')
  const options: SandboxOptions = {
    roots,
    network: values['no-network'] !== true,
    confine: confine as ConfineMode,
    allowWrite: values['allow-write'] ?? [],
    allowSockets: values['allow-socket'] ?? [],
    denyRead: values['deny-read'] ?? [],
    envAllow: values['env-allow'] ?? [],
  }
  const sandbox = createSandbox(options)
  try {
    if (values.explain === true) {
      process.stdout.write(`${sandbox.summary}\n`)
      return 0
    }
    // One argument is a bash line (`-- 'make && make test'`); several are an argv, quoted.
    const command = positionals.length === 1 ? (positionals[0] as string) : positionals
    const job = await sandbox.run(command, values.cwd === undefined ? {} : { cwd: values.cwd })
    const stop = () => void job.stop()
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    if (values.json === true) {
      const [stdout, stderr] = [collect(job.stdout), collect(job.stderr)]
      const end = await job.done
      process.stdout.write(
        `${JSON.stringify({ exit: end.exit, signal: end.signal, stdout: await stdout, stderr: await stderr, changes: end.changes, leftovers: end.leftovers }, null, 2)}\n`,
      )
      return end.exit
    }
    job.stdout.pipe(process.stdout, { end: false })
    job.stderr.pipe(process.stderr, { end: false })
    const end = await job.done
    await Promise.all([drained(job.stdout), drained(job.stderr)])
    process.stderr.write(
      `hands-sandbox: exit ${end.exit}${end.signal === null ? '' : ` (${end.signal})`}${end.leftovers > 0 ? `; ${end.leftovers} processes it left were stopped` : ''}\n`,
    )
    process.stderr.write(`hands-sandbox: ${changedLine(end.changes)}\n`)
    return end.exit
  } finally {
    await sandbox.close()
  }
}

/** All a stream gives, once it has ended (a socket the spawner handed over may have closed already). */
async function collect(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = []
  stream.on('data', (c: Buffer) => chunks.push(c))
  await drained(stream)
  return Buffer.concat(chunks).toString('utf8')
}

/** Resolves once `stream` has ended or failed, at once if it already has. */
function drained(stream: NodeJS.ReadableStream): Promise<void> {
  return finished(stream).catch(() => undefined)
}

/** `changed N: a (created), b (modified), …` as a result line says it, or why nothing was seen. */
function changedLine(c: Changes): string {
  const total = c.counts.created + c.counts.modified + c.counts.deleted + c.counts.renamed
  const named = [
    ...c.created.map((p) => `${p} (created)`),
    ...c.modified.map((p) => `${p} (modified)`),
    ...c.deleted.map((p) => `${p} (deleted)`),
    ...c.renamed.map((r) => `${r.from} → ${r.to} (renamed)`),
  ]
  const more = total - named.length
  const parts = [...named, ...(more > 0 ? [`${more} more`] : []), ...(c.outside_roots > 0 ? [`${c.outside_roots} outside the roots`] : [])]
  const line = total + c.outside_roots === 0 ? 'changed nothing on disk' : `changed ${total}: ${parts.join(', ')}`
  return c.is_complete ? line : `${line} [not complete: ${c.note}]`
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (err: unknown) => {
    if (err instanceof UsageError || (err instanceof TypeError && (err as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION')) {
      process.stderr.write(`hands-sandbox: ${(err as Error).message}\n\n${USAGE}`)
      process.exitCode = 2
    } else if (err instanceof SandboxUnavailableError || err instanceof TypeError) {
      process.stderr.write(`hands-sandbox: ${(err as Error).message}\n`)
      process.exitCode = 2
    } else {
      process.stderr.write(`hands-sandbox: ${(err as Error).stack ?? String(err)}\n`)
      process.exitCode = 1
    }
  },
)
