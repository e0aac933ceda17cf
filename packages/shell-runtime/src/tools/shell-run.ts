import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { assertInput, SHELL_LOGS, SHELL_BACKGROUND, shellRun, type ShellRunInput, type ShellRunResult } from '@hands/contracts'
import { childEnv, NON_INTERACTIVE, guardNote, refusalNote, type HeldCwd, NO_CHANGES, shellSignalHint } from '@hands/sandbox/parts'
import { withHeldCwd } from '../cwd/hold-cwd.ts'
import { refuse } from '../errors.ts'
import type { CapturedStream } from '../output/bounded-capture.ts'
import { runPiped, SpawnError } from '../process/run-piped.ts'
import type { Session } from '../runtime/session.ts'
import { joinNotes, leftoverNote, streamNote, survivorNote } from './notes.ts'

type CommandResult = ShellRunResult['commands'][number]

/** Where a note sends work that outlives the bound. */
const LONG_WORK = `Run long work with ${SHELL_BACKGROUND} and read it with ${SHELL_LOGS}.`

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`
}

function snippet(command: string): string {
  const one = command.replace(/\s+/g, ' ').trim()
  return one.length > 40 ? `${one.slice(0, 39)}…` : one
}

/**
 * True when the line can end in a pipeline of more than one stage: it has a `|`, or runs code
 * it does not show (eval, source, `.`). Only then is the pipestatus pipe set up (a spawn costs
 * about 0.1 ms more with it).
 */
export function mayPipe(command: string): boolean {
  return /\||\beval\b|\bsource\b|(^|[\s;&(])\.\s/.test(command)
}

/** The note for a last pipeline whose stages failed while the command exited 0. */
function pipestatusNote(stages: number[] | null, exit: number | null): string | null {
  if (stages === null || exit !== 0) return null
  const failed = stages.map((s, i) => ({ s, i })).filter(({ s }) => s !== 0)
  if (failed.length === 0) return null
  const which = failed.map(({ s, i }) => `stage ${i + 1} exited ${s}`).join(', ')
  return `The command exited 0, but in its last pipeline ${which} (PIPESTATUS ${stages.join(' ')}).`
}

/** How one shell_run call is driven by its caller. */
export interface ShellRunOptions {
  /**
   * Aborting cancels the call: the running command's whole tree is stopped as the bound stops it
   * (its output kept, its spool file too), later commands are not started, and the call resolves
   * with that account.
   */
  signal?: AbortSignal
}

/** shell_run: each line in order, with its own account, bounded output and the whole tree owned. */
export async function shellRunTool(session: Session, raw: ShellRunInput, options: ShellRunOptions = {}): Promise<ShellRunResult> {
  session.assertOpen()
  const input = assertInput(shellRun, raw)
  return withHeldCwd(session.roots, input.cwd, session.options.gates, shellRun.name, (cwd) => runBatch(session, input, cwd, options.signal))
}

async function runBatch(session: Session, input: ShellRunInput, cwd: HeldCwd, cancel: AbortSignal | undefined): Promise<ShellRunResult> {
  const { options, confiner } = session
  const login = await session.loginEnv()
  const env = childEnv(login.env, NON_INTERACTIVE, {})
  const started = performance.now()
  const deadline = started + options.runBoundMs
  const results: CommandResult[] = []
  /** Each command's streams, whose notes are written once the call is over (a later command may have removed a file). */
  const streams: Array<[CapturedStream, CapturedStream] | null> = []
  let stoppedBy: { index: number; command: string } | null = null
  let closedAt: number | null = null
  let cancelledAt: number | null = null

  for (const [index, command] of input.commands.entries()) {
    if (stoppedBy === null && closedAt === null && cancelledAt === null) {
      if (session.isClosed) closedAt = index
      else if (cancel?.aborted) cancelledAt = index
      else if (performance.now() >= deadline) stoppedBy = { index: -1, command: '' }
    }
    if (stoppedBy !== null || closedAt !== null || cancelledAt !== null) {
      const why =
        closedAt !== null
          ? 'Not started: the host closed the shell session.'
          : cancelledAt !== null
            ? 'Not started: the call was cancelled.'
            : stoppedBy !== null && stoppedBy.index >= 0
              ? `Not started: the host's ${seconds(options.runBoundMs)} bound stopped command ${stoppedBy.index + 1} (\`${snippet(stoppedBy.command)}\`) first. ${LONG_WORK}`
              : `Not started: the host's ${seconds(options.runBoundMs)} bound for this call had passed. ${LONG_WORK}`
      results.push({ command, stdout: '', stderr: '', exit: null, duration_ms: 0, timed_out: false, changes: NO_CHANGES, note: why })
      streams.push(null)
      continue
    }
    const tree = session.keeper.create()
    const seq = session.nextSeq()
    let run
    let scriptFile: string | null = null
    const isPipestatus = mayPipe(command)
    const changes = session.jobChanges(seq)
    try {
      const start = session.launch(tree, command, cwd, seq, 'pipes', isPipestatus)
      scriptFile = start.scriptFile
      run = await session.track(
        (signal) =>
          runPiped({
            launch: start.launch,
            env,
            tree,
            headBytes: options.headBytes,
            tailBytes: options.tailBytes,
            spoolBase: join(session.spoolDir, `run-${seq}`),
            budget: session.spoolBudget,
            deadline,
            graceMs: options.stopGraceMs,
            settleMs: confiner.settleMs,
            isPipestatus,
            isCleaning: true,
            signal,
            spawner: session.spawner(start.launch),
          }),
        cancel,
      )
    } catch (err) {
      tree.dispose()
      if (scriptFile !== null) rmSync(scriptFile, { force: true })
      if (err instanceof SpawnError && results.length === 0) {
        throw refuse('spawn_failed', `Could not start bash: ${err.message}.`, 'The system is short of processes or memory; retry when it has settled.')
      }
      const why = err instanceof SpawnError ? `Not started: bash could not be started (${err.message}).` : `Failed inside hands: ${(err as Error).message}.`
      changes.dispose()
      results.push({ command, stdout: '', stderr: '', exit: null, duration_ms: 0, timed_out: false, changes: NO_CHANGES, note: why })
      streams.push(null)
      continue
    }
    if (scriptFile !== null) rmSync(scriptFile, { force: true })
    const exit = run.ending?.exit ?? null
    const notes: Array<string | null> = []
    if (run.timedOut) {
      stoppedBy = { index, command }
      notes.push(`Stopped with its whole process tree when the host's ${seconds(options.runBoundMs)} bound for this call ran out. ` + LONG_WORK)
    } else if (run.aborted && !session.isClosed && cancel?.aborted === true) {
      cancelledAt = index + 1
      notes.push(`Stopped with its whole process tree because the call was cancelled (exit ${exit}).`)
    } else if (run.aborted) {
      notes.push(`Stopped with its whole process tree because the host closed the shell session (exit ${exit}).`)
    } else if (run.ending?.signal) {
      notes.push(`Killed by ${run.ending.signal} (exit ${run.ending.exit}).`)
    } else if (exit !== null) {
      notes.push(shellSignalHint(exit) === null ? null : `${shellSignalHint(exit)}.`)
    }
    notes.push(pipestatusNote(run.pipestatus, exit))
    // What the relay's guard refused (sockets, metadata), then what stderr shows the kernel refused, each path once.
    const guarded = guardNote(confiner, session.eventsFile(seq))
    notes.push(guarded.note)
    const refused = refusalNote(confiner, run.stderr.text, cwd.real)
    notes.push(guarded.paths.some((p) => refused?.includes(`\`${p}\``)) ? null : refused)
    if (run.leftovers !== null) notes.push(leftoverNote(run.leftovers))
    notes.push(survivorNote([...(run.leftovers?.survivors ?? []), ...(run.boundStop?.survivors ?? [])]))
    notes.push(session.gone.noteFor(command))
    streams.push([run.stdout, run.stderr])
    // The tree is gone (its relay has ended): the record holds every path the line named.
    const changed = changes.total()
    changes.dispose()
    results.push({
      command,
      stdout: run.stdout.text,
      stderr: run.stderr.text,
      exit,
      duration_ms: run.durationMs,
      timed_out: run.timedOut,
      changes: changed,
      note: joinNotes(notes),
    })
  }

  for (const [i, s] of streams.entries()) {
    const r = results[i] as CommandResult
    if (s !== null) {
      r.note = joinNotes([r.note, streamNote('stdout', s[0], session.spoolBudget), streamNote('stderr', s[1], session.spoolBudget), confiner.unconfinedNote])
    }
  }
  const firstBad = results.find((r) => r.exit !== 0)
  return {
    cwd: cwd.real,
    commands: results,
    exit: firstBad === undefined ? 0 : firstBad.exit,
    duration_ms: Math.round(performance.now() - started),
    timed_out: stoppedBy !== null,
  }
}
