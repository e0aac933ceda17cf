import { join } from 'node:path'
import { assertInput, SHELL_STOP, shellBackground, type ShellBackgroundInput, type ShellBackgroundResult } from '@hands/contracts'
import { childEnv, TERMINAL, type HeldCwd } from '@hands/sandbox/parts'
import { withHeldCwd } from '../cwd/hold-cwd.ts'
import { refuse } from '../errors.ts'
import { tooManyShells } from './refusals.ts'
import type { Session } from '../runtime/session.ts'
import { BackgroundShell } from '../shells/background-shell.ts'
import { freeId, programName } from '../shells/derive-id.ts'
import { joinNotes } from './notes.ts'
import { loadPty } from '../shells/load-pty.ts'

function sameScript(shell: BackgroundShell, commands: readonly string[], cwd: string): boolean {
  return shell.cwd === cwd && shell.commands.length === commands.length && shell.commands.every((c, i) => c === commands[i])
}

function describe(shell: BackgroundShell, note: string | null, isAlreadyRunning: boolean): ShellBackgroundResult {
  return {
    id: shell.id,
    cwd: shell.cwd,
    commands: [...shell.commands],
    pid: shell.pid,
    status: shell.status,
    note,
    is_already_running: isAlreadyRunning,
  }
}

/** shell_background: one script under a PTY, returned at once; idempotent for a live script. */
export async function shellBackgroundTool(session: Session, raw: ShellBackgroundInput): Promise<ShellBackgroundResult> {
  session.assertOpen()
  const input = assertInput(shellBackground, raw)
  // Without node-pty nothing can start: refuse (pty_unavailable) before touching anything.
  loadPty()
  return withHeldCwd(session.roots, input.cwd, session.options.gates, shellBackground.name, (held) => start(session, input, held))
}

async function start(session: Session, input: ShellBackgroundInput, held: HeldCwd): Promise<ShellBackgroundResult> {
  const { options, shells } = session
  const cwd = held.real
  const login = await session.loginEnv()
  session.assertOpen()
  const commands = input.commands

  // From here to the spawn nothing awaits, so two identical calls cannot both start a shell.
  let id: string
  if (input.id !== undefined) {
    id = input.id
    const live = shells.get(id)
    if (live !== undefined && live.status === 'running') {
      const note = sameScript(live, commands, cwd)
        ? null
        : `Shell \`${id}\` is already running a different script (in ${live.cwd}); it was left as it is. Stop it with ${SHELL_STOP} first to start this one under that id.`
      return describe(live, joinNotes([note, session.confiner.unconfinedNote]), true)
    }
  } else {
    for (const s of shells.values()) if (s.status === 'running' && sameScript(s, commands, cwd)) return describe(s, session.confiner.unconfinedNote, true)
    id = freeId(programName(commands[0] as string), (x) => shells.get(x)?.status === 'running')
  }
  const replaced = shells.get(id)
  // Exited shells count too: each keeps its lines and log until it is stopped.
  if (shells.size - (replaced === undefined ? 0 : 1) >= options.maxShells) throw tooManyShells(session)
  if (replaced !== undefined) shells.delete(id)

  const tree = session.keeper.create()
  const seq = session.nextSeq()
  let shell: BackgroundShell
  try {
    const { launch, scriptFile } = session.launch(tree, commands.join('\n'), held, seq, 'terminal')
    shell = new BackgroundShell({
      id,
      commands,
      cwd,
      launch,
      scriptFile,
      env: childEnv(login.env, TERMINAL, {}),
      tree,
      ringLines: options.ringLines,
      ringBytes: options.ringBytes,
      logPath: join(session.spoolDir, `shell-${seq}.log`),
      logBytes: options.logBytes,
      typeQueueBytes: options.typeQueueBytes,
      cols: options.cols,
      rows: options.rows,
      changes: session.jobChanges(seq),
    })
  } catch (err) {
    tree.dispose()
    if (replaced !== undefined) shells.set(id, replaced)
    throw refuse(
      'spawn_failed',
      `Could not start the shell: ${(err as Error).message}.`,
      'The system is short of processes, terminals or memory; retry when it has settled.',
    )
  }
  shells.set(id, shell)
  shell.onEnd(() => session.changed())
  session.changed()
  // The exited shell this one replaces may still own processes it left behind.
  if (replaced !== undefined) {
    await replaced.stop(options.stopGraceMs).catch(() => undefined)
    session.gone.recordLog(replaced.logPath, replaced.id)
  }
  return describe(shell, joinNotes([session.gone.noteFor(commands.join('\n')), session.confiner.unconfinedNote]), false)
}
