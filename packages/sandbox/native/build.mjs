#!/usr/bin/env node
/**
 * Build the confinement helper: native/*.c → native/bin/<platform>-<arch>/hands-confine,
 * a static binary without libc (so one file serves every Linux distribution of that architecture).
 *
 *   node native/build.mjs            build when missing or older than the source; without a C
 *                                    compiler, say so and exit 0 (hands then runs commands
 *                                    unconfined, or under bubblewrap, and says why)
 *   node native/build.mjs --strict   fail without a compiler (the package's build step: the
 *                                    published package must carry the binary)
 *   node native/build.mjs --force    rebuild even when up to date
 *
 * The compiler is $CC, else `cc`, else `gcc`.
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const sources = readdirSync(here)
  .filter((f) => f.endsWith('.c'))
  .sort()
  .map((f) => join(here, f))
const inputs = [...sources, join(here, 'hands-confine.h')]
const target = join(here, 'bin', `${process.platform}-${process.arch}`, 'hands-confine')
const isStrict = process.argv.includes('--strict')
const isForce = process.argv.includes('--force')

function finish(message, ok) {
  process.stderr.write(`hands-confine: ${message}\n`)
  process.exit(ok || !isStrict ? 0 : 1)
}

if (process.platform !== 'linux' || !['x64', 'arm64'].includes(process.arch)) {
  finish(`no helper for ${process.platform}-${process.arch}; commands will run unconfined there`, false)
}
if (!isForce && existsSync(target) && inputs.every((f) => statSync(target).mtimeMs >= statSync(f).mtimeMs)) process.exit(0)

const flags = [
  '-O2',
  '-static',
  '-nostdlib',
  '-ffreestanding',
  '-fno-builtin',
  '-fno-stack-protector',
  '-fno-tree-loop-distribute-patterns',
  '-fno-asynchronous-unwind-tables',
  '-fno-pie',
  '-no-pie',
  '-s',
  '-Wall',
  '-Wextra',
  '-Werror',
  // Atomics inline: GCC on arm64 otherwise calls libgcc helpers, and the helper links no library.
  ...(process.arch === 'arm64' ? ['-mno-outline-atomics'] : []),
]
const candidates = [process.env.CC, 'cc', 'gcc'].filter(Boolean)
mkdirSync(dirname(target), { recursive: true })
const partial = `${target}.${process.pid}.tmp`
let lastError = 'no C compiler found (tried $CC, cc, gcc)'
for (const cc of candidates) {
  const r = spawnSync(cc, [...flags, '-o', partial, ...sources], { encoding: 'utf8' })
  if (r.error?.code === 'ENOENT') continue
  if (r.status === 0) {
    chmodSync(partial, 0o755)
    renameSync(partial, target)
    finish(`built ${target}`, true)
  }
  lastError = `${cc} failed:\n${r.stderr || r.error?.message}`
  break
}
finish(`${lastError}\nCommands will not be confined by Landlock until the helper is built.`, false)
