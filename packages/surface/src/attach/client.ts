import { readdirSync, readFileSync, rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { FRAME, FrameReader, frame, json, type AttachEnd, type AttachListing } from './frames.ts'

/** The detach prefix, Ctrl-]; after it `d` detaches and a second Ctrl-] sends one. */
export const DETACH_PREFIX = 0x1d

/** Terminal modes a shell may have switched on, switched off again when a person detaches. */
const RESTORE = '\x1b[0m\x1b[r\x1b[?25h\x1b[?1l\x1b>\x1b[?2004l\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1004l'

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The attach sockets in `dir` whose server is alive; sockets of servers that died are removed. */
export function serverSockets(dir: string): Array<{ pid: number; path: string }> {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return []
  }
  const out: Array<{ pid: number; path: string }> = []
  for (const name of names) {
    const m = /^(\d+)\.sock$/.exec(name)
    if (m === null) continue
    const pid = Number(m[1])
    const path = join(dir, name)
    if (isAlive(pid)) out.push({ pid, path })
    else {
      rmSync(path, { force: true })
      rmSync(keyOf(path), { force: true })
    }
  }
  return out.sort((a, b) => a.pid - b.pid)
}

/** The key file beside a server's socket. */
const keyOf = (socketFile: string) => socketFile.replace(/\.sock$/, '.key')

/** Connect to a server's socket and give its key, which every later frame relies on. */
function open(path: string): Promise<Socket> {
  let key = ''
  try {
    key = readFileSync(keyOf(path), 'latin1').trim()
  } catch {
    // no key to give: the server says why it refuses
  }
  return new Promise((resolve, reject) => {
    const socket = connect(path)
    socket.once('connect', () => {
      socket.write(frame(FRAME.key, Buffer.from(key, 'latin1')))
      resolve(socket)
    })
    socket.once('error', reject)
  })
}

/** Ask one server for its shells; null when it does not answer. */
export async function listServer(path: string): Promise<AttachListing | null> {
  let socket: Socket
  try {
    socket = await open(path)
  } catch {
    return null
  }
  return new Promise((resolve) => {
    const reader = new FrameReader()
    let done = false
    const finish = (v: AttachListing | null) => {
      if (done) return
      done = true
      socket.destroy()
      resolve(v)
    }
    socket.on('data', (chunk: Buffer) => {
      for (const f of reader.push(chunk)) if (f.type === FRAME.listing) finish(json<AttachListing>(f.payload))
    })
    socket.on('close', () => finish(null))
    socket.on('error', () => finish(null))
    socket.setTimeout(5000, () => finish(null))
    socket.write(frame(FRAME.list))
  })
}

/** Every live server in `dir` with its shells. */
export async function listAll(dir: string): Promise<AttachListing[]> {
  const all = await Promise.all(serverSockets(dir).map((s) => listServer(s.path)))
  return all.filter((l): l is AttachListing => l !== null)
}

export interface AttachOptions {
  dir: string
  id: string
  /** The server's pid, when more than one server runs. */
  server?: number
  /** The session label, when the server has several (HTTP). */
  session?: string
  isReadOnly: boolean
  input: NodeJS.ReadStream
  output: NodeJS.WriteStream
  /** Where messages for the person go (stderr). */
  log: (line: string) => void
}

/** Pick the server holding shell `id`; a string says why none could be picked. */
export async function pickServer(dir: string, id: string, server?: number): Promise<{ path: string } | string> {
  const sockets = serverSockets(dir).filter((s) => server === undefined || s.pid === server)
  if (sockets.length === 0) {
    return server === undefined
      ? `no hands server offers attach in ${dir} (start one with \`hands serve\`)`
      : `no hands server with pid ${server} offers attach in ${dir}`
  }
  if (sockets.length === 1) return { path: (sockets[0] as { path: string }).path }
  const listings = await Promise.all(sockets.map(async (s) => ({ s, l: await listServer(s.path) })))
  const holding = listings.filter(({ l }) => l?.sessions.some((x) => x.shells.some((sh) => sh.id === id)))
  if (holding.length === 1) return { path: (holding[0] as { s: { path: string } }).s.path }
  if (holding.length === 0) return `no server in ${dir} has a shell \`${id}\`; \`hands attach --list\` shows what there is`
  return `shell \`${id}\` is on servers ${holding.map(({ s }) => s.pid).join(', ')}; pass --server PID`
}

/**
 * Attach this terminal to a shell: raw mode, the screen redrawn at once, then its output and
 * these keystrokes until Ctrl-] d (or, read-only, also Ctrl-C) or the shell ends. Resolves to the
 * exit code for the CLI.
 */
export async function attachTerminal(options: AttachOptions): Promise<number> {
  const picked = await pickServer(options.dir, options.id, options.server)
  if (typeof picked === 'string') {
    options.log(`hands: ${picked}`)
    return 1
  }
  const socket = await open(picked.path)
  const { input, output } = options
  const reader = new FrameReader()
  let isRaw = false
  let afterPrefix = false
  let started: { id: string; cols: number; rows: number } | null = null

  const restore = (end: AttachEnd | null) => {
    if (!isRaw) return
    output.write(`${RESTORE}${end?.isAlternate ? '\x1b[?1049l' : ''}\r\n`)
    input.setRawMode?.(false)
    input.pause()
    isRaw = false
  }

  const keys = (chunk: Buffer) => {
    const out: number[] = []
    let detach = false
    for (const byte of chunk) {
      if (afterPrefix) {
        afterPrefix = false
        if (byte === 0x64 /* d */) {
          detach = true
          break
        }
        out.push(DETACH_PREFIX)
        if (byte !== DETACH_PREFIX) out.push(byte)
      } else if (byte === DETACH_PREFIX) afterPrefix = true
      else if (byte === 0x03 && options.isReadOnly) {
        detach = true
        break
      } else out.push(byte)
    }
    if (out.length > 0 && !options.isReadOnly) socket.write(frame(FRAME.input, Buffer.from(out)))
    if (detach) socket.write(frame(FRAME.detach))
  }

  return new Promise<number>((resolve) => {
    let code: number | null = null
    const finish = (c: number, end: AttachEnd | null, message: string | null) => {
      if (code !== null) return
      code = c
      restore(end)
      input.off('data', keys)
      if (message !== null) options.log(message)
      socket.destroy()
      resolve(c)
    }
    socket.on('data', (chunk: Buffer) => {
      let frames
      try {
        frames = reader.push(chunk)
      } catch (e) {
        return finish(1, null, `hands: ${(e as Error).message}`)
      }
      for (const f of frames) {
        if (f.type === FRAME.error) return finish(1, null, `hands: ${json<{ message: string }>(f.payload).message}`)
        if (f.type === FRAME.started) {
          started = json<{ id: string; cols: number; rows: number }>(f.payload)
          const cols = output.columns
          const rows = output.rows
          if (cols !== undefined && rows !== undefined && (cols < started.cols || rows < started.rows)) {
            options.log(`hands: shell \`${started.id}\` has a ${started.cols}x${started.rows} terminal and this one is ${cols}x${rows}; lines may wrap`)
          }
          options.log(`hands: attached to \`${started.id}\`${options.isReadOnly ? ' (read-only; Ctrl-C or Ctrl-] d detaches)' : '; Ctrl-] d detaches'}`)
          if (input.isTTY) input.setRawMode(true)
          isRaw = true
          input.on('data', keys)
          input.resume()
        } else if (f.type === FRAME.output) output.write(f.payload)
        else if (f.type === FRAME.end) {
          const end = json<AttachEnd>(f.payload)
          const what = started?.id ?? options.id
          const message =
            end.reason === 'detached'
              ? `hands: detached from \`${what}\``
              : end.reason === 'exited'
                ? `hands: shell \`${what}\` ended`
                : `hands: the server closed \`${what}\``
          return finish(0, end, message)
        }
      }
    })
    socket.on('error', (e) => finish(1, null, `hands: attach connection failed: ${e.message}`))
    socket.on('close', () => finish(1, null, 'hands: the server went away'))
    socket.write(frame(FRAME.attach, { id: options.id, session: options.session, isReadOnly: options.isReadOnly }))
  })
}
