import { describeAllowed, effectTraits } from '@hands/contracts'
import { failure, type CallOutcome } from '../outcome.ts'
import { renderOutcome } from '../render/text.ts'
import type { Session } from '../session.ts'

/** What every API adapter needs from a session: calls in a safe order, and the text a model reads. */
export interface Dispatcher {
  /** Call one tool through the session, waiting for earlier calls its effect must not overlap. */
  call(name: string, input: unknown): Promise<CallOutcome>
  /** Call one tool whose arguments arrive as JSON text; text that does not parse is an `invalid_input` outcome. */
  callWithJson(name: string, argumentsText: string): Promise<CallOutcome>
  /** The text of an outcome for the model, with paths relative to the workspace root. */
  text(outcome: CallOutcome): string
}

/**
 * Admits calls in arrival order. A parallel-safe call (a read-only effect) overlaps with the
 * parallel-safe calls next to it; any other call waits for everything before it and holds back
 * everything after it, so a read after a write sees the write.
 */
function createGate(): <T>(isParallelSafe: boolean, run: () => Promise<T>) => Promise<T> {
  const settled = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      () => undefined,
    )
  let barrier: Promise<unknown> = Promise.resolve()
  let readers: Array<Promise<unknown>> = []
  return (isParallelSafe, run) => {
    if (isParallelSafe) {
      const p = barrier.then(run)
      readers.push(settled(p))
      return p
    }
    const p = Promise.all([barrier, ...readers]).then(run)
    barrier = settled(p)
    readers = []
    return p
  }
}

/** A dispatcher over one session; each adapter instance keeps its own. */
export function createDispatcher(session: Session): Dispatcher {
  const admit = createGate()
  const workspace = session.roots[0]
  const renderOptions = workspace === undefined ? {} : { workspace }
  const descriptorOf = (name: string) => session.tools.find((t) => t.name === name)

  // A call to a tool the session does not offer runs nothing (unknown_tool / disabled), so it never waits.
  const call = (name: string, input: unknown) => {
    const descriptor = descriptorOf(name)
    return admit(descriptor === undefined || effectTraits(descriptor.effect).isParallelSafe, () => session.call(name, input))
  }

  return {
    call,
    callWithJson(name, argumentsText) {
      // An empty arguments string is how the APIs send a call with no arguments.
      if (argumentsText.trim() === '') return call(name, {})
      let input: unknown
      try {
        input = JSON.parse(argumentsText)
      } catch (e) {
        const descriptor = descriptorOf(name)
        // The session names an unknown or switched-off tool better than a JSON complaint would.
        if (descriptor === undefined) return call(name, {})
        return Promise.resolve(
          failure(name, {
            code: 'invalid_input',
            message: `${name}: the arguments are not valid JSON (${(e as Error).message})`,
            hint: `Send the arguments as one JSON object: ${describeAllowed(descriptor.input)}.`,
            is_preflight: true,
          }),
        )
      }
      return call(name, input)
    },
    text: (outcome) => renderOutcome(outcome, renderOptions),
  }
}
