import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { RequestId } from '@modelcontextprotocol/sdk/types.js'
import type { ConfirmDecline, ConfirmRequest } from '../hooks.ts'
import { sizeText, visiblePath } from '../render/visible.ts'

/** The boolean the confirmation form asks for. */
const CONFIRM = 'confirm'

type Target = ConfirmRequest['targets'][number]

function describeTarget(t: Target): string {
  if (t.kind === 'directory') return `directory holding ${t.files} file${t.files === 1 ? '' : 's'}, ${sizeText(t.bytes)}`
  if (t.kind === 'file') return `file, ${sizeText(t.bytes)}`
  if (t.kind === 'symlink') return 'symlink (the link itself; what it points to is kept)'
  return 'special file'
}

/**
 * The text a person confirms: the tool and the act, then one line per path at stake with what
 * it is and how much it holds. Every path is escaped and quoted, so a file name carrying
 * newlines or terminal escapes cannot hide or forge a line.
 */
export function confirmationText(request: ConfirmRequest): string {
  const verb = request.action === 'delete' ? 'delete' : 'replace'
  const n = request.targets.length
  const lines = request.targets.map((t) => `- ${visiblePath(t.path)}: ${describeTarget(t)}`)
  const dirs = request.targets.filter((t) => t.kind === 'directory')
  const summary = dirs.length === 0 ? '' : `\nEverything inside ${dirs.length === 1 ? 'the directory' : `the ${dirs.length} directories`} goes too.`
  return `${request.tool} asks to ${verb} ${n} path${n === 1 ? '' : 's'}:\n${lines.join('\n')}${summary}`
}

/**
 * Ask the client's user through elicitation before a destructive act. Only an `accept` with
 * `confirm: true` confirms; every other answer declines and says what it was, so the model
 * reads what happened instead of a generic refusal. `call` is the id of the tool call asking: the
 * question travels with that call's answer (over HTTP, on its POST's stream), so a client that
 * opens no standalone stream still gets it.
 */
export async function askToConfirm(server: Server, request: ConfirmRequest, call?: RequestId): Promise<true | ConfirmDecline> {
  const what = request.action === 'delete' ? 'Delete' : 'Replace'
  let answer
  try {
    answer = await server.elicitInput(
      {
        message: confirmationText(request),
        requestedSchema: {
          type: 'object',
          properties: {
            [CONFIRM]: { type: 'boolean', title: `${what} ${request.targets.length === 1 ? 'this path' : `these ${request.targets.length} paths`}` },
          },
          required: [CONFIRM],
        },
      },
      call === undefined ? undefined : { relatedRequestId: call },
    )
  } catch (e) {
    return { declined: `the confirmation request to the client failed (${e instanceof Error ? e.message : String(e)})` }
  }
  if (answer.action === 'decline') return { declined: 'the user declined' }
  if (answer.action === 'cancel') return { declined: 'the user dismissed the confirmation without answering' }
  const value = answer.content?.[CONFIRM]
  if (value === true) return true
  if (value === false) return { declined: `the user accepted the form but left \`${CONFIRM}\` false` }
  return { declined: `the client accepted the form without a \`${CONFIRM}\` answer` }
}
