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

/** The traits of an effect (a fresh copy the caller may keep). */
export function effectTraits(effect: Effect): EffectTraits {
  const t = TRAITS[effect]
  return { ...t, annotations: { ...t.annotations } }
}

/** The MCP annotations derived from an effect. */
export function annotationsFor(effect: Effect): ToolAnnotations {
  return { ...TRAITS[effect].annotations }
}
