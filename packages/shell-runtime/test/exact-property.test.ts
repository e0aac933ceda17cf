/**
 * The account against a ground truth, for command sequences drawn at random: what the root holds
 * before and after (each entry's type, mode, owner, size, modification time, content hash, link
 * target, read with lstat) says which paths changed, and the account must name or count every one
 * of them (exact), or say it is not complete (declared) — never silently short. It may report a
 * path beyond the ground truth only where the entry's change time moved (the command touched it:
 * a mode set and set back). Sequences mix creating, appending, truncating, deleting, renaming
 * within and across directories and over existing entries, there and back, directories made and
 * removed, symlinks and hard links that stood before or that the command makes, writes through a
 * link or /proc/self/cwd, names that are not UTF-8, paths deeper than 4,096 bytes, and two
 * subshells at once.
 */
import { createHash } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { chownSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Changes } from '@hands/contracts'
import { hostArgv, makeRuntime, MECHANISMS, tempDir } from './helpers.ts'

/** More rounds for a longer hunt: `HANDS_PROPERTY_RUNS=1000` (and `HANDS_PROPERTY_SEED` for the nobody rounds). */
const RUNS = Number(process.env.HANDS_PROPERTY_RUNS ?? 60)
const SEED = Number(process.env.HANDS_PROPERTY_SEED ?? 31)

/** Names the sequences use: files at three depths, one not UTF-8 (bash $'…' quoting), and directories. */
const FILES = ['f0', 'f1', 'f2', 'a/f3', 'a/b/f4', 'c/f5', "$'\\xff\\xfe'"]
const DIRS = ['a', 'a/b', 'c', 'e']

const name = fc.constantFrom(...FILES)
const dir = fc.constantFrom(...DIRS)
const op = fc.oneof(
  name.map((p) => `echo x >> ${p}`),
  name.map((p) => `echo y > ${p}`),
  name.map((p) => `: > ${p}`),
  name.map((p) => `rm -f ${p}`),
  fc.tuple(name, name).map(([p, q]) => `mv -f ${p} ${q}`),
  fc.tuple(name, dir).map(([p, d]) => `mv -f ${p} ${d}/`),
  name.map((p) => `mv ${p} moved && mv moved ${p}`),
  dir.map((d) => `mkdir -p ${d}`),
  dir.map((d) => `rmdir ${d}`),
  dir.map((d) => `rm -rf ${d}`),
  fc.tuple(name, name).map(([p, q]) => `ln -s ${p.split('/').pop()} ${q}`),
  fc.tuple(name, name).map(([p, q]) => `ln ${p} ${q}`),
  fc.tuple(name, fc.constantFrom('600', '640', '755')).map(([p, m]) => `chmod ${m} ${p}`),
  name.map((p) => `echo z >> /proc/self/cwd/${p}`),
  name.map((p) => `exec 7<${p} && echo w >> /dev/fd/7; exec 7<&-`),
  fc.constant('echo l >> link-f0'),
  fc.constant(`d=$(printf 'd%.0s' {1..220}); mkdir -p deep && cd deep && for i in $(seq 20); do mkdir -p $d && cd $d; done; touch x; cd "$OLDPWD"`),
)
/** One command: a sequence, sometimes split into two subshells that run at once. */
const command = fc.tuple(fc.array(op, { minLength: 1, maxLength: 8 }), fc.array(op, { maxLength: 4 })).map(([first, second]) => {
  const run = (ops: string[]) => ops.map((o) => `{ ${o}; } 2>/dev/null`).join('; ')
  return second.length === 0 ? run(first) : `( ${run(first)} ) & ( ${run(second)} ) & wait`
})

/** What stood before: a few files, one of them with a second name, a link, a directory. */
function seed(root: string): void {
  mkdirSync(join(root, 'a', 'b'), { recursive: true })
  for (const f of ['f0', 'f1', 'a/f3']) writeFileSync(join(root, f), `${f}\n`)
  linkSync(join(root, 'f1'), join(root, 'c-link-of-f1'))
  symlinkSync('f0', join(root, 'link-f0'))
}

interface Entry {
  type: string
  /** Everything the ground truth compares. */
  key: string
  ctimeNs: bigint
}

/** Every entry under `root` (byte-string relative paths), by lstat and content. Deep trees (> 4,096 bytes) are left out: the account declares those. */
function snapshot(root: string): Map<string, Entry> {
  const out = new Map<string, Entry>()
  const walk = (rel: string) => {
    const abs = Buffer.from(join(root, rel), 'latin1')
    for (const n of readdirSync(abs, { encoding: 'buffer' })) {
      const child = rel === '' ? n.toString('latin1') : `${rel}/${n.toString('latin1')}`
      if (child.startsWith('deep')) continue
      const p = Buffer.from(join(root, child), 'latin1')
      const st = lstatSync(p, { bigint: true })
      const type = st.isFile() ? 'f' : st.isDirectory() ? 'd' : st.isSymbolicLink() ? 'l' : 'o'
      const content =
        type === 'f'
          ? createHash('sha256').update(readFileSync(p)).digest('hex')
          : type === 'l'
            ? readlinkSync(p, { encoding: 'buffer' }).toString('latin1')
            : ''
      const meta = type === 'd' ? `${st.mode} ${st.uid}:${st.gid}` : `${st.mode} ${st.uid}:${st.gid} ${st.size} ${st.mtimeNs} ${content}`
      out.set(child, { type, key: `${type} ${meta}`, ctimeNs: st.ctimeNs })
      if (type === 'd') walk(child)
    }
  }
  walk('')
  return out
}

/** A byte-string path under the round's directory `at` as the account shows it (relative to the workspace; UTF-8, other bytes as \xHH). */
function shown(at: string, path: string, type: string): string {
  const b = Buffer.from(`${at}/${path}`, 'latin1')
  const text = [...b].map((c) => (c < 0x80 ? String.fromCharCode(c) : `\\x${c.toString(16).padStart(2, '0')}`)).join('')
  return type === 'd' ? `${text}/` : text
}

/**
 * Check one command's account against the ground truth of its round (`at`, under the workspace):
 * every changed path named (while the lists have room) or counted, nothing named beyond them but
 * what the command touched; or the account says it is not complete.
 */
function verdict(line: string, at: string, before: Map<string, Entry>, after: Map<string, Entry>, c: Changes): void {
  if (!c.is_complete) {
    expect(c.note).not.toBeNull()
    return
  }
  // The ground truth: what was made, removed or changed; inside a directory made or removed with
  // it, an entry is counted, not named (as the account names them).
  const changed = new Map<string, 'created' | 'deleted' | 'modified'>()
  for (const p of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(p)
    const b = after.get(p)
    if (a?.key === b?.key) continue
    changed.set(p, a === undefined ? 'created' : b === undefined ? 'deleted' : 'modified')
  }
  const isInsideMadeOrRemoved = (p: string) => {
    for (let cut = p.lastIndexOf('/'); cut > 0; cut = p.lastIndexOf('/', cut - 1)) {
      const d = p.slice(0, cut)
      const kind = changed.get(d)
      if ((kind === 'created' && after.get(d)?.type === 'd') || (kind === 'deleted' && before.get(d)?.type === 'd')) return true
    }
    return false
  }
  const reported = new Set([...c.created, ...c.modified, ...c.deleted, ...c.renamed.flatMap((x) => [x.from, x.to])])
  const total = c.counts.created + c.counts.modified + c.counts.deleted + c.counts.renamed
  const named = [...changed].filter(([p]) => !isInsideMadeOrRemoved(p))
  for (const [p, kind] of named) {
    const type = (kind === 'deleted' ? before.get(p) : after.get(p))?.type ?? 'f'
    // Named while the lists have room; past ten of a kind, at least counted.
    if (total <= 10) expect(reported, `${line}: ${p} ${kind} not in the account ${JSON.stringify(c)}`).toContain(shown(at, p, type))
  }
  if (named.length > 0) expect(total, `${line}: ${JSON.stringify(c)}`).toBeGreaterThan(0)
  // Beyond the ground truth only what the command touched: its change time moved.
  const all = [...new Set([...before.keys(), ...after.keys()])]
  for (const p of reported) {
    const raw = p.endsWith('/') ? p.slice(0, -1) : p
    const key = all.find((k) => shown(at, k, 'f') === raw)
    if (key === undefined || changed.has(key)) continue
    expect(before.get(key)?.ctimeNs, `${line}: ${p} reported, unchanged and untouched`).not.toBe(after.get(key)?.ctimeNs)
  }
}

describe.each(MECHANISMS)('the account against a ground truth (%s)', (confine) => {
  it('names or counts every path a random sequence changed, or says it is not complete; never silently short', async () => {
    const { rt, root: workspace } = makeRuntime({ confine })
    let round = 0
    await fc.assert(
      fc.asyncProperty(command, async (line) => {
        // Each round in a directory of its own in the workspace.
        const at = `round-${round++}`
        const root = join(workspace, at)
        mkdirSync(root)
        seed(root)
        const before = snapshot(root)
        const r = await rt.shell_run({ commands: [line], cwd: root })
        const after = snapshot(root)
        // Node cannot remove what is deeper than 4,096 bytes; rm walks it by descriptor.
        execFileSync('rm', ['-rf', join(root, 'deep')])
        verdict(line, at, before, after, r.commands[0]!.changes)
      }),
      { numRuns: RUNS },
    )
  }, 600_000)

  it.skipIf(process.getuid?.() !== 0)(
    'holds as an ordinary user too: as many sequences, each a call of a host run as nobody',
    () => {
      const NOBODY = 65534
      const workspace = tempDir('property-nobody')
      chownSync(workspace, NOBODY, NOBODY)
      const lines = fc.sample(command, { numRuns: Math.max(40, RUNS), seed: SEED })
      const rounds = lines.map((line, i) => {
        const at = `round-${i}`
        const root = join(workspace, at)
        mkdirSync(root)
        seed(root)
        execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, root])
        return { line, at, root, before: snapshot(root) }
      })
      const argv = ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', ...hostArgv('effects-host', [confine, workspace, '-'])]
      const input = JSON.stringify(rounds.map((r) => `cd ${r.at} || exit 1; ${r.line}`))
      const out = execFileSync(argv[0] as string, argv.slice(1), {
        input,
        encoding: 'utf8',
        env: { ...process.env, HOME: workspace },
        timeout: 1_200_000,
        maxBuffer: 1 << 28,
      })
      const { accounts } = JSON.parse(out) as { accounts: Changes[] }
      // Every round's after, and its deep tree gone, before any verdict can stop the test.
      const afters = rounds.map((r) => snapshot(r.root))
      for (const r of rounds) execFileSync('rm', ['-rf', join(r.root, 'deep')])
      for (const [i, r] of rounds.entries()) verdict(r.line, r.at, r.before, afters[i] as Map<string, Entry>, accounts[i] as Changes)
    },
    600_000,
  )
})
