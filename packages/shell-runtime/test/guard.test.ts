/**
 * What Landlock leaves open, the relay's guard holds (native/guard.c): a confined command connects
 * only to UNIX sockets under the roots, TMPDIR and the paths the host allows, and changes the mode,
 * owner, times and extended attributes of files only under its writable paths. The guard performs
 * each such call itself on what it checked, so a second thread that rewrites the path during the
 * call reaches nothing more. Both mechanisms for sockets; metadata outside is read-only under
 * bubblewrap already.
 */
import { execFileSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { makeRuntime, MECHANISMS, tempDir } from './helpers.ts'

const isRoot = process.getuid?.() === 0
const py = (code: string) => `python3 - <<'EOF'\n${code}\nEOF`

/** A place outside every root that bubblewrap's job sees too (not /tmp, which it replaces). */
function outsideDir(label: string): string {
  return tempDir(label, existsSync('/var/tmp') ? '/var/tmp' : undefined)
}

const servers: Server[] = []
afterEach(() => {
  for (const s of servers.splice(0)) s.close()
})

/** A UNIX socket listener at `path` (or `\0name`) that answers `hello` and counts connections. */
async function listener(path: string): Promise<{ count: () => number }> {
  let n = 0
  const server = createServer((c) => {
    n++
    // A client the guard shut down, or one that closed at once, resets the connection.
    c.on('error', () => undefined)
    c.end('hello')
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(path, resolve))
  return { count: () => n }
}

const connect = (path: string) => py(`import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect(${JSON.stringify(path)})\nprint(s.recv(5).decode())`)

describe.each(MECHANISMS)('the guard of sockets (%s)', (confine) => {
  it('connects to sockets under the roots and TMPDIR and to those the host allows; refuses every other host socket, with a note naming it', async () => {
    const root = outsideDir('socket-root')
    const out = outsideDir('socket-out')
    const allowed = outsideDir('socket-allowed')
    const inRoot = await listener(join(root, 'app.sock'))
    const host = await listener(join(out, 'docker.sock'))
    const permitted = await listener(join(allowed, 'agent.sock'))
    // A link inside the root to the host's socket: where the link leads decides.
    execFileSync('ln', ['-s', join(out, 'docker.sock'), join(root, 'link.sock')])
    const { rt } = makeRuntime({ roots: [root], confine, allowSockets: [join(allowed, 'agent.sock')] })
    expect(rt.confinement.summary).toContain('sockets: a command connects only to UNIX sockets under the roots and its TMPDIR and 1 --allow-socket path')
    const r = await rt.shell_run({
      commands: [
        connect(join(root, 'app.sock')),
        connect('app.sock'),
        connect(join(allowed, 'agent.sock')),
        connect(join(out, 'docker.sock')),
        connect('link.sock'),
        // A server and client of the command's own, in its TMPDIR.
        py(
          'import os, socket, threading\np = os.path.join(os.environ["TMPDIR"], "own.sock")\ns = socket.socket(socket.AF_UNIX); s.bind(p); s.listen(1)\nthreading.Thread(target=lambda: s.accept()[0].send(b"mine!"), daemon=True).start()\nc = socket.socket(socket.AF_UNIX); c.connect(p); print(c.recv(5).decode())',
        ),
      ],
    })
    const [a, b, c, d, e, f] = r.commands
    expect(a?.stdout).toBe('hello\n')
    expect(b?.stdout).toBe('hello\n')
    expect(c?.stdout).toBe('hello\n')
    expect(f?.stdout).toBe('mine!\n')
    for (const refused of [d, e]) {
      expect(refused?.exit, refused?.stderr).not.toBe(0)
      expect(refused?.stderr).toContain('Permission denied')
    }
    expect(d?.note).toContain(
      `The sandbox refused a connection to the socket \`${join(out, 'docker.sock')}\`: commands may connect only to sockets under the allowed roots`,
    )
    expect(d?.note).toContain('the host can allow more socket paths')
    expect(inRoot.count()).toBe(2)
    expect(permitted.count()).toBe(1)
    expect(host.count()).toBe(0)
  })

  it("refuses a host's abstract socket, allows the command's own, and makes no datagram UNIX socket (a stream pair works)", async () => {
    const name = `hands-guard-${process.pid}-${confine}`
    const hostAbstract = await listener(`\0${name}`)
    const { rt } = makeRuntime({ confine })
    const r = await rt.shell_run({
      commands: [
        connect(`\0${name}`),
        py(
          'import socket, threading\ns = socket.socket(socket.AF_UNIX); s.bind("\\0own-abstract-' +
            process.pid +
            '"); s.listen(1)\nthreading.Thread(target=lambda: s.accept()[0].send(b"mine!"), daemon=True).start()\nc = socket.socket(socket.AF_UNIX); c.connect("\\0own-abstract-' +
            process.pid +
            '"); print(c.recv(5).decode())',
        ),
        py('import socket\nsocket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)'),
        py('import socket\nsocket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)'),
        py('import socket\na, b = socket.socketpair()\na.send(b"pair!")\nprint(b.recv(5).decode())'),
      ],
    })
    expect(r.commands[0]?.exit).not.toBe(0)
    expect(r.commands[0]?.stdout).toBe('')
    // Connected, then shut down: the host's listener sees a connection and its end, nothing passes.
    expect(hostAbstract.count()).toBeLessThanOrEqual(1)
    expect(r.commands[1]?.stdout).toBe('mine!\n')
    for (const c of r.commands.slice(2, 4)) expect(c.stderr, c.command).toContain('Permission denied')
    expect(r.commands[4]?.stdout).toBe('pair!\n')
  })

  it('a second thread that rewrites the address during each connect never reaches a socket outside', async () => {
    const root = outsideDir('race-root')
    const out = outsideDir('race-out')
    const inRoot = await listener(join(root, 's'))
    const host = await listener(join(out, 's'))
    const { rt } = makeRuntime({ roots: [root], confine })
    // The address sits in memory the racing thread flips between the two paths while ctypes
    // (which lets go of the GIL) calls connect(2) 3,000 times.
    const code = `
import ctypes, socket, threading
libc = ctypes.CDLL(None, use_errno=True)
good, bad = ${JSON.stringify(join(root, 's'))}.encode(), ${JSON.stringify(join(out, 's'))}.encode()
buf = ctypes.create_string_buffer(110)
buf[0:2] = b"\\x01\\x00"
def put(p):
    ctypes.memmove(ctypes.addressof(buf) + 2, p + b"\\0" * (108 - len(p)), 108)
put(good)
stop = False
def flip():
    while not stop:
        put(bad); put(good)
threading.Thread(target=flip, daemon=True).start()
ok = 0
for _ in range(3000):
    s = socket.socket(socket.AF_UNIX)
    if libc.connect(s.fileno(), buf, 110) == 0: ok += 1
    s.close()
stop = True
print("connected", ok)`
    const r = await rt.shell_run({ commands: [py(code)] })
    expect(r.commands[0]?.stdout, r.commands[0]?.stderr).toMatch(/^connected \d+\n$/)
    expect(host.count()).toBe(0)
    expect(inRoot.count()).toBeGreaterThan(0)
  }, 120_000)

  it("a blocking connect that waits does not hold up the command's other calls", async () => {
    const root = outsideDir('wait-root')
    // A listener that never accepts, with its backlog full: a blocking connect to it waits.
    const full = join(root, 'full.sock')
    const code = `
import os, socket, threading, time
srv = socket.socket(socket.AF_UNIX); srv.bind(${JSON.stringify(full)}); srv.listen(0)
fill = [socket.socket(socket.AF_UNIX) for _ in range(4)]
for f in fill:
    f.setblocking(False)
    try: f.connect(${JSON.stringify(full)})
    except OSError: pass
waiting = socket.socket(socket.AF_UNIX)
waiting.settimeout(None)
threading.Thread(target=lambda: waiting.connect(${JSON.stringify(full)}), daemon=True).start()
time.sleep(0.3)
t = time.monotonic()
for i in range(200):
    os.chmod(${JSON.stringify(join(root, 'f'))}, 0o600 if i % 2 else 0o644)
print("chmods took", round(time.monotonic() - t, 2), flush=True)
os._exit(0)`
    writeFileSync(join(root, 'f'), 'x')
    const { rt } = makeRuntime({ roots: [root], confine })
    const r = await rt.shell_run({ commands: [py(code)] })
    const took = Number(/chmods took ([\d.]+)/.exec(r.commands[0]?.stdout ?? '')?.[1])
    expect(took, `${r.commands[0]?.stdout}${r.commands[0]?.stderr}${r.commands[0]?.exit}`).toBeLessThan(20)
  }, 120_000)
})

/** Mode, owner, modification and change times of everything under `dir`: a change of mode, owner, times or extended attributes moves the change time, a read moves none. */
function metadata(dir: string): string {
  const out: string[] = []
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name)
      const st = lstatSync(p)
      out.push(`${p} ${st.mode} ${st.uid}:${st.gid} ${st.mtimeMs} ${st.ctimeMs}`)
      if (st.isDirectory()) walk(p)
    }
  }
  walk(dir)
  return out.join('\n')
}

describe.skipIf(!MECHANISMS.includes('landlock'))('the guard of metadata (landlock)', () => {
  it('refuses chmod, chown, touch -d and xattrs of files outside the roots, by path, through a link and by descriptor; allows them inside', async () => {
    const root = tempDir('meta-root')
    const out = tempDir('meta-out')
    writeFileSync(join(out, 'f'), 'outside\n')
    mkdirSync(join(out, 'd'))
    writeFileSync(join(root, 'f'), 'inside\n')
    execFileSync('ln', ['-s', join(out, 'f'), join(root, 'link')])
    const before = metadata(out)
    const { rt } = makeRuntime({ roots: [root], confine: 'landlock' })
    expect(rt.confinement.summary).toContain('metadata: mode, owner, times and extended attributes change only under the writable paths')
    const O = join(out, 'f')
    const outside = [
      `chmod 600 ${O}`,
      `chmod 700 ${join(out, 'd')}`,
      `touch -d 2001-01-01 ${O}`,
      `touch -h -d 2001-01-01 ${O}`,
      ...(isRoot ? [`chown nobody ${O}`, `chown -h nobody ${O}`] : []),
      py(`import os; os.setxattr(${JSON.stringify(O)}, "user.k", b"v")`),
      py(`import os; os.removexattr(${JSON.stringify(O)}, "user.none")`),
      'chmod 600 link',
      py(`import os; fd = os.open(${JSON.stringify(O)}, os.O_RDONLY); os.fchmod(fd, 0o600)`),
      py(`import os; fd = os.open(${JSON.stringify(O)}, os.O_RDONLY); os.utime(fd, (1, 1))`),
      py(`import os; fd = os.open(${JSON.stringify(out)}, os.O_RDONLY); os.chmod("f", 0o600, dir_fd=fd)`),
      `exec 7<${O} && chmod 600 /proc/self/fd/7`,
      `exec 7<${O} && chmod 600 /dev/fd/7`,
    ]
    const inside = [
      'chmod 600 f',
      // A name of the command's own descriptor leads to its file (glibc's fchmodat with
      // AT_SYMLINK_NOFOLLOW goes that way, and with it tar restoring a directory's mode).
      'exec 7<f && chmod 604 /proc/self/fd/7 && chmod 606 /dev/fd/7',
      py('import os; fd = os.open("f", os.O_PATH); os.chmod(f"/proc/self/fd/{fd}", 0o600)'),
      'mkdir -p t/a/b && chmod 750 t/a && tar -cf t.tar t && mkdir x && tar -xf t.tar -C x && stat -c %a x/t/a',
      'touch -d 2001-01-01 f',
      ...(isRoot ? ['chown nobody f && chown root f'] : []),
      py('import os; os.setxattr("f", "user.k", b"v"); print(os.getxattr("f", "user.k").decode())'),
      py('import os; fd = os.open("f", os.O_WRONLY); os.fchmod(fd, 0o640)'),
      'chmod 644 "$TMPDIR" && touch -h link',
    ]
    const r = await rt.shell_run({ commands: [...outside, ...inside] })
    for (const c of r.commands.slice(0, outside.length)) {
      expect(c.exit, c.command).not.toBe(0)
      expect(c.stderr, c.command).toContain('Permission denied')
    }
    for (const c of r.commands.slice(outside.length)) expect(c.exit, `${c.command}: ${c.stderr}`).toBe(0)
    expect(r.commands.find((c) => c.command.includes('tar -xf'))?.stdout.trim()).toBe('750')
    expect(r.commands[0]?.note).toContain(`The sandbox refused to change the mode, owner, times or extended attributes of \`${O}\``)
    expect(metadata(out)).toBe(before)
    expect(lstatSync(join(root, 'f')).mode & 0o777).toBe(0o640)
  })

  it('a second thread that rewrites the path during each chmod never changes a file outside', async () => {
    const root = tempDir('meta-race-root')
    const out = tempDir('meta-race-out')
    writeFileSync(join(root, 'f'), 'x')
    writeFileSync(join(out, 'f'), 'x')
    chmodSync(join(out, 'f'), 0o644)
    const { rt } = makeRuntime({ roots: [root], confine: 'landlock' })
    const code = `
import ctypes, threading
libc = ctypes.CDLL(None, use_errno=True)
good, bad = ${JSON.stringify(join(root, 'f'))}.encode(), ${JSON.stringify(join(out, 'f'))}.encode()
buf = ctypes.create_string_buffer(4096)
def put(p):
    ctypes.memmove(buf, p + b"\\0", len(p) + 1)
put(good)
stop = False
def flip():
    while not stop:
        put(bad); put(good)
threading.Thread(target=flip, daemon=True).start()
ok = 0
for i in range(3000):
    if libc.chmod(buf, 0o600 if i % 2 else 0o640) == 0: ok += 1
stop = True
print("changed", ok)`
    const r = await rt.shell_run({ commands: [py(code)] })
    expect(r.commands[0]?.stdout, r.commands[0]?.stderr).toMatch(/^changed \d+\n$/)
    expect(lstatSync(join(out, 'f')).mode & 0o777).toBe(0o644)
  }, 120_000)

  it.skipIf(!isRoot)('a command that dropped to another user changes only what that user may, though the relay acting for it is root', async () => {
    const root = tempDir('meta-drop')
    writeFileSync(join(root, 'roots-file'), 'x')
    chmodSync(join(root, 'roots-file'), 0o644)
    writeFileSync(join(root, 'nobodys-file'), 'x')
    chownSync(join(root, 'nobodys-file'), 65534, 65534)
    chmodSync(root, 0o755)
    const { rt } = makeRuntime({ roots: [root], confine: 'landlock' })
    const as = (cmd: string) => `setpriv --reuid=65534 --regid=65534 --clear-groups -- ${cmd}`
    const r = await rt.shell_run({
      commands: [as('chmod 600 roots-file'), as('chmod 600 nobodys-file'), as('chown nobody roots-file'), as('touch -d 2001-01-01 roots-file')],
    })
    expect(r.commands.map((c) => c.exit)).toEqual([1, 0, 1, 1])
    expect(r.commands[0]?.stderr).toContain('Operation not permitted')
    expect(lstatSync(join(root, 'roots-file')).mode & 0o777).toBe(0o644)
    expect(lstatSync(join(root, 'nobodys-file')).mode & 0o777).toBe(0o600)
  })
})
