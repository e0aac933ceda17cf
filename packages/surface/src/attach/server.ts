import { randomBytes, timingSafeEqual } from 'node:crypto'
import { rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import type { ShellAttachment } from '@hands/shell-runtime'
import type { Session } from '../session.ts'
import { FRAME, FrameReader, frame, json, type AttachEnd, type AttachListing } from './frames.ts'
import { ensurePrivateDir, keyPath, socketPath } from './socket-dir.ts'

/** Output a slow person's terminal may fall behind by before it gets a fresh redraw instead. */
const LAG_BYTES = 4 * 1024 * 1024

/** A running attach server: one UNIX socket for every session of this process. */
export interface AttachServer {
  /** The socket's path. */
  readonly path: string
  /** Offer a session's shells under `label`. */
  add(label: string, session: Session): void
  /** Stop offering a session (its attachments end). */
  remove(label: string): void
  /** End every attachment, close the socket and remove it. Idempotent. */
  close(): Promise<void>
}

interface AttachRequest {
  id?: unknown
  session?: unknown
  isReadOnly?: unknown
}

/** Why a connecting process may not use the socket, or null when it may (see peerRefusal in @hands/shell-runtime). */
async function refusalOf(socket: Socket): Promise<string | null> {
  const { describePeer, peerRefusal } = await import('@hands/shell-runtime')
  try {
    return peerRefusal(await describePeer(socket))
  } catch (e) {
    return `attach cannot check who connected: ${(e as Error).message}`
  }
}

/**
 * Serve `hands attach` on `<dir>/<pid>.sock`, in a directory only this user can open (checked,
 * made 0700 when missing), beside its key (`<pid>.key`, 0600). Before it reads anything a client
 * sends, the server checks who connected: a process inside any hands job or sandbox (a command of
 * this server or another) is refused; and the first frame must be the key, which every hands
 * command has hidden. So no command can list, watch or type into a shell through it. A client lists the
 * shells, or attaches to one: it gets the current screen at once, then what the shell draws (only
 * what draws a screen: see ScreenFilter), and its keystrokes go to the terminal (unless read-only)
 * until it detaches or the shell ends. Never a TCP port. `log` gets one line per refused client.
 */
export async function startAttachServer(dir: string, log: (line: string) => void = () => undefined): Promise<AttachServer> {
  ensurePrivateDir(dir)
  const path = socketPath(dir, process.pid)
  const keyFile = keyPath(dir, process.pid)
  rmSync(path, { force: true })
  rmSync(keyFile, { force: true })
  const key = randomBytes(32)
  writeFileSync(keyFile, key.toString('hex'), { mode: 0o600, flag: 'wx' })
  const isKey = (payload: Buffer) => {
    const given = Buffer.from(payload.toString('latin1'), 'hex')
    return given.length === key.length && timingSafeEqual(given, key)
  }
  const sessions = new Map<string, Session>()
  const live = new Map<Socket, { label: string; attachment: ShellAttachment | null }>()

  const listing = (): AttachListing => ({
    pid: process.pid,
    roots: [...new Set([...sessions.values()].flatMap((s) => [...s.roots]))],
    sessions: [...sessions.entries()].map(([session, s]) => ({
      session,
      shells: s.resources().map((r) => ({ id: r.id, status: r.status, commands: r.commands, cwd: r.cwd })),
    })),
  })

  const server: Server = createServer((socket) => {
    const reader = new FrameReader()
    const state: { label: string; attachment: ShellAttachment | null } = { label: '', attachment: null }
    live.set(socket, state)
    let isReadOnly = false
    let isLagging = false
    let hasKey = false
    const end = (info: AttachEnd) => {
      if (socket.destroyed) return
      socket.end(frame(FRAME.end, info))
    }
    const refuse = (message: string) => {
      if (!socket.destroyed) socket.end(frame(FRAME.error, { message }))
    }
    const detach = () => {
      const a = state.attachment
      state.attachment = null
      a?.detach()
      return a
    }
    socket.on('error', () => undefined)
    socket.on('close', () => {
      detach()
      live.delete(socket)
    })
    socket.on('drain', () => {
      // Caught up after falling behind: redraw the screen as it is now.
      if (!isLagging || state.attachment === null) return
      isLagging = false
      socket.write(frame(FRAME.output, state.attachment.redraw()))
    })
    // Nothing the client sends is read until it is known who connected.
    const held: Buffer[] = []
    let isChecked = false
    socket.on('data', (chunk: Buffer) => {
      if (isChecked) onData(chunk)
      else held.push(chunk)
    })
    void refusalOf(socket).then((why) => {
      if (why !== null) {
        log(`hands: refused an attach client: ${why}`)
        return refuse(`hands attach refused: ${why}. Attach from your own terminal, outside any command hands runs.`)
      }
      isChecked = true
      for (const chunk of held.splice(0)) onData(chunk)
    })
    const onData = (chunk: Buffer) => {
      if (socket.destroyed) return
      let frames
      try {
        frames = reader.push(chunk)
      } catch (e) {
        return refuse((e as Error).message)
      }
      for (const f of frames) {
        if (!hasKey) {
          if (f.type !== FRAME.key || !isKey(f.payload)) {
            log("hands: refused an attach client: it did not give this server's key")
            return refuse(`hands attach refused: the client did not give this server's key (${keyFile}, readable only outside the commands hands runs)`)
          }
          hasKey = true
          continue
        }
        if (f.type === FRAME.list) {
          socket.end(frame(FRAME.listing, listing()))
          return
        }
        if (f.type === FRAME.attach && state.attachment === null) {
          let req: AttachRequest
          try {
            req = json<AttachRequest>(f.payload)
          } catch {
            return refuse('the attach request is not JSON')
          }
          const found = find(sessions, req)
          if (typeof found === 'string') return refuse(found)
          isReadOnly = req.isReadOnly === true
          state.label = found.label
          const attachment = found.session.attach(found.id, {
            data: (bytes) => {
              if (isLagging || socket.destroyed) return
              socket.write(frame(FRAME.output, bytes))
              if (socket.writableLength > LAG_BYTES) isLagging = true
            },
            end: () => {
              state.attachment = null
              end({ reason: 'exited', isAlternate: false })
            },
          })
          if (attachment === null) return refuse(`shell \`${found.id}\` is not running; nothing to attach to`)
          state.attachment = attachment
          socket.write(frame(FRAME.started, { id: found.id, session: found.label, cols: attachment.cols, rows: attachment.rows, isReadOnly }))
          socket.write(frame(FRAME.output, attachment.snapshot))
          continue
        }
        if (f.type === FRAME.input && state.attachment !== null) {
          if (!isReadOnly) state.attachment.input(f.payload)
          continue
        }
        if (f.type === FRAME.detach) {
          const a = detach()
          end({ reason: 'detached', isAlternate: a?.isAlternate() ?? false })
          return
        }
      }
    }
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(path, () => resolve())
  })

  let closing: Promise<void> | null = null
  return {
    path,
    add: (label, session) => {
      sessions.set(label, session)
    },
    remove: (label) => {
      sessions.delete(label)
      for (const [socket, state] of live) {
        if (state.label !== label || state.attachment === null) continue
        const a = state.attachment
        state.attachment = null
        a.detach()
        socket.end(frame(FRAME.end, { reason: 'closed', isAlternate: a.isAlternate() } satisfies AttachEnd))
      }
    },
    close: () => {
      closing ??= (async () => {
        for (const [socket, state] of live) {
          const a = state.attachment
          state.attachment = null
          a?.detach()
          socket.end(frame(FRAME.end, { reason: 'closed', isAlternate: a?.isAlternate() ?? false } satisfies AttachEnd))
        }
        sessions.clear()
        await new Promise<void>((resolve) => server.close(() => resolve()))
        rmSync(path, { force: true })
        rmSync(keyFile, { force: true })
      })()
      return closing
    },
  }
}

/** The session and shell a request names, or why there is none. */
function find(sessions: Map<string, Session>, req: AttachRequest): { label: string; session: Session; id: string } | string {
  if (typeof req.id !== 'string' || req.id === '') return 'the attach request names no shell id'
  const id = req.id
  const wanted = typeof req.session === 'string' ? req.session : null
  const matches = [...sessions.entries()].filter(([label, s]) => (wanted === null || label === wanted) && s.resources().some((r) => r.id === id))
  if (matches.length === 0) {
    const ids = [...sessions.entries()].flatMap(([label, s]) => s.resources().map((r) => (sessions.size > 1 ? `${label}/${r.id}` : r.id)))
    return `no shell \`${id}\`${wanted === null ? '' : ` in session ${wanted}`}; shells here: ${ids.length === 0 ? 'none' : ids.join(', ')}`
  }
  if (matches.length > 1) return `shell \`${id}\` exists in sessions ${matches.map(([l]) => l).join(', ')}; pass --session`
  const [label, session] = matches[0] as [string, Session]
  return { label, session, id }
}
