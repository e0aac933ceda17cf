import type { TObject } from 'typebox'
import { annotationsFor, type Effect, type ToolAnnotations } from './effect.ts'
import { CODE_TOOL, type ToolName } from './names.ts'

/** What prose may vary by host: the name of the harness's code tool. */
export interface ProseContext {
  /** The tool the model writes code in (loops, parsing); null when the harness has none, and no sentence names one. */
  codeTool: string | null
}

export const DEFAULT_PROSE: ProseContext = { codeTool: CODE_TOOL }

/** A tool contract as written in its file: the description is rendered for a prose context. */
export interface ToolContract<I extends TObject = TObject, R extends TObject = TObject, N extends ToolName = ToolName> {
  name: N
  title: string
  describe: (prose: ProseContext) => string
  input: I
  result: R
  /** Input property names in positional call order (e.g. `copy(src, dest)`). */
  call: readonly string[]
  effect: Effect
  /** The boolean input property under which the call may replace existing data (`is_overwrite`); omitted when none. */
  destroysWhen?: string
  /** The host toggle that removes this tool, or null when it cannot be switched off. */
  toggle: 'shell' | null
}

/** A tool as a host sees it: the contract with its description rendered and annotations derived. */
export interface ToolDescriptor<I extends TObject = TObject, R extends TObject = TObject> {
  name: ToolName
  title: string
  description: string
  input: I
  result: R
  call: readonly string[]
  effect: Effect
  /** The boolean input property under which the call may replace existing data; null when none. */
  destroysWhen: string | null
  toggle: 'shell' | null
  annotations: ToolAnnotations
}

/** Identity helper that keeps a contract's literal types. */
export function defineTool<I extends TObject, R extends TObject, N extends ToolName>(contract: ToolContract<I, R, N>): ToolContract<I, R, N> {
  return contract
}

/** Render a contract into the descriptor a host serves. */
export function describeTool<I extends TObject, R extends TObject>(contract: ToolContract<I, R>, prose: ProseContext = DEFAULT_PROSE): ToolDescriptor<I, R> {
  return {
    name: contract.name,
    title: contract.title,
    description: contract.describe(prose),
    input: contract.input,
    result: contract.result,
    call: contract.call,
    effect: contract.effect,
    destroysWhen: contract.destroysWhen ?? null,
    toggle: contract.toggle,
    annotations: annotationsFor(contract.effect, contract.destroysWhen ?? null),
  }
}
