import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { ConfirmDecline, ConfirmRequest } from '../hooks.ts'

/** The boolean the confirmation form asks for. */
const CONFIRM = 'confirm'

/**
 * Ask the client's user through elicitation before a destructive act. Only an `accept` with
 * `confirm: true` confirms; every other answer declines and says what it was, so the model
 * reads what happened instead of a generic refusal.
 */
export async function askToConfirm(server: Server, request: ConfirmRequest): Promise<true | ConfirmDecline> {
  const what = request.action === 'delete' ? 'Delete' : 'Overwrite'
  let answer
  try {
    answer = await server.elicitInput({
      message: `${request.tool}: ${what} ${request.paths.join(', ')}?`,
      requestedSchema: {
        type: 'object',
        properties: { [CONFIRM]: { type: 'boolean', title: `${what} ${request.paths.length} path(s)` } },
        required: [CONFIRM],
      },
    })
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
