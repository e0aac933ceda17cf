/**
 * The account is exact or says it is not: what a command changed through a symlink, a /proc magic
 * link, another name of a hard-linked file, a UNIX socket it bound, a name that is not UTF-8, or
 * under a path too long to name, is reported where the change is (or declared), never silently
 * missed; a rename there and back is no change. Each row is one a pass that did not write the code
 * found reported wrongly.
 */
import { execFileSync } from 'node:child_process'
import { linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { shellRun, type Changes } from '@hands/contracts'
import { describe, expect, it } from 'vitest'
import { makeRuntime, MECHANISMS, tempDir, valid } from './helpers.ts'

const isRoot = process.getuid?.() === 0
/** Off is observed only when hands runs as root (see docs/effects.md). */
const MODES = [...MECHANISMS, ...(isRoot ? (['off'] as const) : [])]

function account(c: Changes) {
  return {
    created: c.created,
    modified: c.modified,
    deleted: c.deleted,
    renamed: c.renamed,
    counts: c.counts,
    outside_roots: c.outside_roots,
    is_complete: c.is_complete,
  }
}
const none = {
  created: [],
  modified: [],
  deleted: [],
  renamed: [],
  counts: { created: 0, modified: 0, deleted: 0, renamed: 0 },
  outside_roots: 0,
  is_complete: true,
}

describe.each(MODES)('the account, exact (%s)', (confine) => {
  it('names the target of a symlink a write, chmod or truncate follows, and the file behind /proc/self/fd, /dev/fd and /proc/self/cwd', async () => {
    const root = tempDir('exact')
    for (const name of ['target.txt', 't2.txt', 't3.txt', 'a.txt', 'b.txt', 'c.txt', 'd.txt']) writeFileSync(join(root, name), 'old\n')
    symlinkSync('target.txt', join(root, 'link'))
    symlinkSync('t2.txt', join(root, 'link2'))
    symlinkSync('t3.txt', join(root, 'link3'))
    const { rt } = makeRuntime({ confine, roots: [root] })
    const r = valid(
      shellRun,
      await rt.shell_run({
        cwd: root,
        commands: [
          'echo x >> link',
          'chmod 600 link2',
          'truncate -s 0 link3',
          'exec 3<a.txt; echo X > /dev/fd/3',
          'exec 4<b.txt; echo Y >> /proc/self/fd/4',
          'echo Z >> /proc/self/cwd/c.txt',
          'rm /proc/self/cwd/d.txt',
          'touch /proc/self/cwd/new.txt',
        ],
      }),
    )
    const got = r.commands.map((c) => account(c.changes))
    expect(got[0]).toEqual({ ...none, modified: ['target.txt'], counts: { ...none.counts, modified: 1 } })
    expect(got[1]).toEqual({ ...none, modified: ['t2.txt'], counts: { ...none.counts, modified: 1 } })
    expect(got[2]).toEqual({ ...none, modified: ['t3.txt'], counts: { ...none.counts, modified: 1 } })
    expect(got[3]).toEqual({ ...none, modified: ['a.txt'], counts: { ...none.counts, modified: 1 } })
    expect(got[4]).toEqual({ ...none, modified: ['b.txt'], counts: { ...none.counts, modified: 1 } })
    expect(got[5]).toEqual({ ...none, modified: ['c.txt'], counts: { ...none.counts, modified: 1 } })
    expect(got[6]).toEqual({ ...none, deleted: ['d.txt'], counts: { ...none.counts, deleted: 1 } })
    expect(got[7]).toEqual({ ...none, created: ['new.txt'], counts: { ...none.counts, created: 1 } })
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('X\n')
  })

  it.skipIf(confine !== 'off')('unconfined, a write through a link to outside the roots is counted outside', async () => {
    const root = tempDir('exact-off')
    const outside = tempDir('exact-outside')
    writeFileSync(join(outside, 'o.txt'), 'old\n')
    symlinkSync(join(outside, 'o.txt'), join(root, 'out'))
    const { rt } = makeRuntime({ confine, roots: [root] })
    const r = valid(shellRun, await rt.shell_run({ cwd: root, commands: ['echo x >> out'] }))
    expect(account(r.commands[0]!.changes)).toEqual({ ...none, outside_roots: 1 })
  })

  it('names every name of a hard-linked file written through one of them, and counts names outside the roots', async () => {
    const root = tempDir('exact-links')
    mkdirSync(join(root, 'sub'))
    writeFileSync(join(root, 'f'), 'old\n')
    linkSync(join(root, 'f'), join(root, 'h'))
    linkSync(join(root, 'f'), join(root, 'sub', 'h2'))
    // A fourth name outside the roots, on the same filesystem (the temporary directory beside the root).
    const outside = tempDir('exact-links-out')
    linkSync(join(root, 'f'), join(outside, 'h3'))
    const { rt } = makeRuntime({ confine, roots: [root] })
    const r = valid(shellRun, await rt.shell_run({ cwd: root, commands: ['echo more >> h'] }))
    const c = r.commands[0]!.changes
    expect([...c.modified].sort()).toEqual(['f', 'h', 'sub/h2'])
    expect(c.counts.modified).toBe(3)
    expect(c.outside_roots).toBe(1)
    expect(c.is_complete).toBe(true)
  })

  it('names the other name of a file written after the command made the link, or through a descriptor whose name it removed', async () => {
    const root = tempDir('exact-links-made')
    for (const f of ['a', 'b', 'c']) writeFileSync(join(root, f), `${f}\n`)
    linkSync(join(root, 'b'), join(root, 'b2'))
    linkSync(join(root, 'c'), join(root, 'c2'))
    const { rt } = makeRuntime({ confine, roots: [root] })
    const byDescriptor = `python3 -c "import os; fd = os.open('c', os.O_RDONLY); os.unlink('c'); os.fchmod(fd, 0o600)"`
    const r = valid(shellRun, await rt.shell_run({ cwd: root, commands: ['ln a a2 && echo x >> a2', 'exec 7<b && rm b && echo w >> /dev/fd/7', byDescriptor] }))
    const [made, gone, fchmod] = r.commands.map((c) => c.changes)
    expect(account(fchmod!)).toEqual({ ...none, modified: ['c2'], deleted: ['c'], counts: { ...none.counts, modified: 1, deleted: 1 } })
    expect(account(made!)).toEqual({ ...none, created: ['a2'], modified: ['a'], counts: { ...none.counts, created: 1, modified: 1 } })
    expect(account(gone!)).toEqual({ ...none, modified: ['b2'], deleted: ['b'], counts: { ...none.counts, modified: 1, deleted: 1 } })
    expect(readFileSync(join(root, 'b2'), 'utf8')).toBe('b\nw\n')
  })

  it('names what changed in a directory given other permissions or replaced, and never takes a new entry on a reused inode number for a rename', async () => {
    const root = tempDir('exact-reuse')
    mkdirSync(join(root, 'd'))
    mkdirSync(join(root, 'r'))
    for (const f of ['d/f', 'r/f', 'x']) writeFileSync(join(root, f), 'old\n')
    const { rt } = makeRuntime({ confine, roots: [root] })
    const r = valid(
      shellRun,
      await rt.shell_run({
        cwd: root,
        commands: ['chmod 700 d && echo more >> d/f', 'rm -rf r && mkdir r && echo new > r/f', 'mv x y/ 2>/dev/null; rm x && mkdir y'],
      }),
    )
    const [chmod, replaced, reused] = r.commands.map((c) => account({ ...c.changes, modified: [...c.changes.modified].sort() }))
    expect(chmod).toEqual({ ...none, modified: ['d/', 'd/f'], counts: { ...none.counts, modified: 2 } })
    expect(replaced).toEqual({ ...none, modified: ['r/', 'r/f'], counts: { ...none.counts, modified: 2 } })
    // ext4 gives the new directory the number the removed file freed: still a delete and a create.
    expect(reused).toEqual({ ...none, created: ['y/'], deleted: ['x'], counts: { ...none.counts, created: 1, deleted: 1 } })
  })

  it('names a UNIX socket a command bound, a name that is not UTF-8 (escaped), and a rename there and back as no change', async () => {
    const root = tempDir('exact-odd')
    writeFileSync(join(root, 'f'), 'x\n')
    const { rt } = makeRuntime({ confine, roots: [root] })
    const r = valid(
      shellRun,
      await rt.shell_run({
        cwd: root,
        commands: [`python3 -c "import socket; socket.socket(socket.AF_UNIX).bind('s')"`, "touch $'\\xff\\xfe' $'caf\\xc3\\xa9'", 'mv f g && mv g f'],
      }),
    )
    const [bound, odd, back] = r.commands.map((c) => account(c.changes))
    expect(bound).toEqual({ ...none, created: ['s'], counts: { ...none.counts, created: 1 } })
    expect({ ...odd, created: [...(odd?.created ?? [])].sort() }).toEqual({ ...none, created: ['\\xff\\xfe', 'café'], counts: { ...none.counts, created: 2 } })
    expect(back).toEqual(none)
  })

  it('counts, and says it could not name, what a command changed under a working directory longer than 4,096 bytes', async () => {
    const root = tempDir('exact-deep')
    const { rt } = makeRuntime({ confine, roots: [root] })
    const segment = 'd'.repeat(200)
    const r = valid(
      shellRun,
      await rt.shell_run({
        cwd: root,
        commands: [`for i in $(seq 25); do mkdir ${segment} && cd ${segment} || exit 1; done; touch deep-1 deep-2; echo made`],
      }),
    )
    const c = r.commands[0]!
    expect(c.stdout).toBe('made\n')
    expect(c.changes.is_complete).toBe(false)
    expect(c.changes.note).toMatch(/changes? under a path longer than 4,096 bytes could not be named/)
    expect(execFileSync('find', [root, '-name', 'deep-*'], { encoding: 'utf8' }).trim().split('\n')).toHaveLength(2)
    // Node cannot remove a tree this deep (ENAMETOOLONG); rm walks it by descriptor.
    execFileSync('rm', ['-rf', join(root, segment)])
  })
})
