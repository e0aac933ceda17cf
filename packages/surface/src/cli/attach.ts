import { parseArgs } from 'node:util'
import { attachTerminal, listAll } from '../attach/client.ts'
import { defaultAttachDir } from '../attach/socket-dir.ts'
import { visibleText } from '../render/visible.ts'
import { UsageError } from './args.ts'

export const ATTACH_HELP = `usage: hands attach ID [options]
       hands attach --list [options]

Connect this terminal to a live background shell of a running \`hands serve\`: the shell's
screen is redrawn at once, then its output streams here and your keystrokes go to it, while the
model keeps working. Detach with Ctrl-] then d (Ctrl-] twice sends one Ctrl-]); the attachment
also ends when the shell does. What you type reaches the shell as keystrokes: the model sees it
in shell_logs only as the shell echoes it on the screen.

  --list                list the servers and their shells
  --read-only           watch without typing (Ctrl-C also detaches)
  --server PID          the server to use when several run
  --session N           the session to use when the server has several (HTTP)
  --attach-dir DIR      where servers put their sockets (default: ${defaultAttachDir()})
  -h, --help            this help`

const FLAGS = {
  list: { type: 'boolean' },
  'read-only': { type: 'boolean' },
  server: { type: 'string' },
  session: { type: 'string' },
  'attach-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

/** `hands attach`: resolves to the exit code. */
export async function attach(argv: string[]): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({ args: argv, options: FLAGS, allowPositionals: true, strict: true })
  } catch (e) {
    throw new UsageError((e as Error).message)
  }
  const { values, positionals } = parsed
  if (values.help) {
    process.stdout.write(`${ATTACH_HELP}\n`)
    return 0
  }
  const dir = values['attach-dir'] ?? defaultAttachDir()
  if (values.list) {
    if (positionals.length > 0) throw new UsageError(`attach --list takes no shell id, got ${positionals.join(' ')}`)
    const listings = await listAll(dir)
    if (listings.length === 0) {
      process.stdout.write(`no hands server offers attach in ${dir}\n`)
      return 0
    }
    // Ids and commands are the model's words: written so that none can forge or hide a line.
    for (const l of listings) {
      process.stdout.write(`server ${l.pid} (roots ${l.roots.map(visibleText).join(', ') || 'none yet'})\n`)
      for (const s of l.sessions) {
        const session = visibleText(String(s.session))
        if (s.shells.length === 0) process.stdout.write(`  session ${session}: no background shells\n`)
        for (const sh of s.shells)
          process.stdout.write(
            `  session ${session}  ${visibleText(sh.id).padEnd(16)} ${visibleText(sh.status).padEnd(8)} ${sh.commands.map(visibleText).join('; ')}\n`,
          )
      }
    }
    return 0
  }
  const [id, ...rest] = positionals
  if (id === undefined || rest.length > 0) throw new UsageError('attach takes exactly one shell ID (or --list), e.g. hands attach npm')
  let server: number | undefined
  if (values.server !== undefined) {
    if (!/^\d+$/.test(values.server)) throw new UsageError(`--server takes a process id, got ${JSON.stringify(values.server)}`)
    server = Number(values.server)
  }
  if (!process.stdin.isTTY && values['read-only'] !== true)
    throw new UsageError('attach needs a terminal on stdin to type into the shell; use --read-only to watch without one')
  return attachTerminal({
    dir,
    id,
    ...(server !== undefined ? { server } : {}),
    ...(values.session !== undefined ? { session: values.session } : {}),
    isReadOnly: values['read-only'] === true,
    input: process.stdin,
    output: process.stdout,
    log: (line) => process.stderr.write(`${line}\n`),
  })
}
