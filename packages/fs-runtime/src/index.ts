export { consultGates, type GateVerdict, type PathAccess, type PathGate } from './confine/gate.ts'
export { resolveInside, type ResolveInsideOptions } from './confine/resolve.ts'
export { isWithin } from './confine/roots.ts'
