/**
 * What a tool does to the world. Annotations, confirmation and parallel safety are derived
 * from it, never written by hand per tool.
 */
export type Effect = 'read' | 'mutate' | 'destroy' | 'execute'

/** MCP tool annotations (the four behavioural hints of the MCP spec). */
export interface ToolAnnotations {
  readOnlyHint: boolean
  destructiveHint: boolean
  idempotentHint: boolean
  openWorldHint: boolean
}

/** Everything a host derives from an effect. */
export interface EffectTraits {
  annotations: ToolAnnotations
  /** The host's confirmation hook is consulted before the call acts. */
  isConfirmed: boolean
  /** Calls may run concurrently with any other call. */
  isParallelSafe: boolean
}

const TRAITS: Record<Effect, EffectTraits> = {
  read: {
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    isConfirmed: false,
    isParallelSafe: true,
  },
  mutate: {
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    isConfirmed: false,
    isParallelSafe: false,
  },
  destroy: {
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    isConfirmed: true,
    isParallelSafe: false,
  },
  execute: {
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    isConfirmed: false,
    isParallelSafe: false,
  },
}

/**
 * The traits of an effect (a fresh copy the caller may keep). `destroysWhen` names the boolean
 * input that lets a call replace existing data (copy/move `is_overwrite`): such a tool MAY
 * destroy, so its `destructiveHint` is true whatever its effect, and the host confirms the
 * calls that do (the runtime asks when the flag is set and something would be replaced).
 */
export function effectTraits(effect: Effect, destroysWhen: string | null = null): EffectTraits {
  const t = TRAITS[effect]
  return { ...t, annotations: annotationsFor(effect, destroysWhen) }
}

/** The MCP annotations derived from an effect and the input flag (if any) under which the tool may destroy. */
export function annotationsFor(effect: Effect, destroysWhen: string | null = null): ToolAnnotations {
  const annotations = { ...TRAITS[effect].annotations }
  if (destroysWhen !== null) annotations.destructiveHint = true
  return annotations
}
