import { refuse } from '../errors.ts'
import type { ConfineRefusal } from '@hands/sandbox/parts'

/**
 * The error every shell tool answers with while no sandbox can confine commands here and the host
 * has not switched confinement off: what is missing and its cause, then what the host can do. The
 * file tools still work, so the hint sends the model there.
 */
export function sandboxUnavailable(refusal: ConfineRefusal) {
  return refuse(
    'sandbox_unavailable',
    `Commands cannot run on this host: no sandbox can confine them (${refusal.missing}), and the host has not chosen to run them unconfined.`,
    `Every shell tool refuses the same way while the host stays as it is, so do not retry; the file tools still work. The host's operator can ${refusal.fix}.`,
  )
}
