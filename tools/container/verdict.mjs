#!/usr/bin/env node
// Reads what `hands call shell_run …` printed (stdin) for check.sh, prints each command's exit,
// stdout, stderr and note (or the error hands answered with), and a verdict line. One line run
// writes where the user may write but a confined command may not
// (`touch /tmp/outside-the-root && echo wrote-outside`):
//   - unconfined: the result says it ran unconfined ("Ran unconfined …"), or the write got through;
//   - confined: hands' note says the kernel refused the write, which it says only of a path the
//     user could write but the sandbox does not let commands write;
//   - refused: no result but the error sandbox_unavailable (no sandbox works here and the host did
//     not choose --confine off: hands ran nothing; check.sh also looks for a mark the first line
//     would have left in the workspace);
//   - inconclusive: none of these (the write failed for another reason, such as a read-only home).
//
//   hands call shell_run '{"commands":[…]}' | node tools/container/verdict.mjs
//
// Exit: 0 confined, 1 unconfined, 2 refused (sandbox_unavailable), 3 no result (another error, or
// nothing parseable), 4 inconclusive.
import { readFileSync } from 'node:fs'

const text = readFileSync(0, 'utf8')
let result
try {
  result = JSON.parse(text)
} catch {
  result = null
}

/** One line, long output cut. */
const show = (s, max = 200) => JSON.stringify(typeof s === 'string' && s.length > max ? `${s.slice(0, max)}…` : s)

const commands = Array.isArray(result?.commands) ? result.commands : null
if (commands === null) {
  if (typeof result?.code === 'string') {
    process.stdout.write(`  error ${result.code}\n    message: ${show(result.message, 400)}\n    hint: ${show(result.hint, 400)}\n`)
    if (result.code === 'sandbox_unavailable') {
      process.stdout.write('  verdict: refused (sandbox_unavailable: no sandbox works here, and nothing ran)\n')
      process.exit(2)
    }
    process.stdout.write(`  verdict: no command ran (${result.code})\n`)
    process.exit(3)
  }
  const first = text.trim().split('\n').slice(0, 6).join('\n    ')
  process.stdout.write(`  no result: ${first === '' ? '(nothing on stdout)' : first}\n  verdict: no command ran\n`)
  process.exit(3)
}

let isUnconfined = false
let isRefused = false
for (const c of commands) {
  process.stdout.write(`  $ ${c.command}\n    exit ${c.exit}, stdout ${show(c.stdout)}, stderr ${show(c.stderr)}\n`)
  if (c.note) process.stdout.write(`    note: ${c.note}\n`)
  const note = typeof c.note === 'string' ? c.note : ''
  if (note.startsWith('Ran unconfined') || (typeof c.stdout === 'string' && c.stdout.includes('wrote-outside'))) isUnconfined = true
  // Only the write outside the root decides "confined": other lines may be refused for other reasons.
  if (String(c.command).includes('outside-the-root') && note.startsWith('The kernel refused a write')) isRefused = true
}
if (isUnconfined) process.stdout.write('  verdict: UNCONFINED (the result says so, or the write outside the root got through)\n')
else if (isRefused) process.stdout.write('  verdict: confined (the kernel refused the write outside the root)\n')
else process.stdout.write('  verdict: inconclusive (the write outside the root failed, but not by the sandbox)\n')
process.exit(isUnconfined ? 1 : isRefused ? 0 : 4)
