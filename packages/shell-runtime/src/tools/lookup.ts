import { SHELL_BACKGROUND } from '@hands/contracts'
import { refuse } from '../errors.ts'
import type { Session } from '../runtime/session.ts'
import type { BackgroundShell } from '../shells/background-shell.ts'

/** The session's shell ids as a hint lists them: `Live ids: …; exited: ….` */
export function listIds(session: Session): string {
  const ids = [...session.shells.keys()]
  const live = [...session.shells.values()].filter((s) => s.status === 'running').map((s) => s.id)
  return (
    `Live ids: ${live.length === 0 ? 'none' : live.map((x) => `\`${x}\``).join(', ')}` +
    (ids.length > live.length
      ? `; exited: ${ids
          .filter((x) => !live.includes(x))
          .map((x) => `\`${x}\``)
          .join(', ')}.`
      : '.')
  )
}

/** The shell behind `id`, or an `unknown_id` refusal whose hint lists the live ids. */
export function lookupShell(session: Session, id: string): BackgroundShell {
  const shell = session.shells.get(id)
  if (shell !== undefined) return shell
  const hint = session.shells.size === 0 ? `No background shells exist in this session; start one with ${SHELL_BACKGROUND}.` : listIds(session)
  throw refuse('unknown_id', `No background shell has id \`${id}\`.`, hint)
}
