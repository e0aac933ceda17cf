/** What a tool wants to do with a path, as a host access gate sees it. */
export type PathAccess = 'read' | 'write' | 'delete' | 'cwd'

/** A gate's answer: act, make the path look absent, or refuse it. */
export type GateVerdict = 'allow' | 'hide' | 'deny'

/**
 * A host access gate. It receives the real absolute path (symlinks resolved), the access
 * wanted and the calling tool's name. 'hide' makes the path look absent to reads and refuses
 * writes; 'deny' refuses. A gate that throws, or answers anything else, counts as 'deny'.
 */
export type PathGate = (path: string, access: PathAccess, tool: string) => GateVerdict | Promise<GateVerdict>

/**
 * Ask every gate about one path; the strictest answer wins (deny > hide > allow). Any
 * exception or unknown answer is 'deny', so a broken gate fails closed.
 */
export async function consultGates(gates: readonly PathGate[] | undefined, real: string, access: PathAccess, tool: string): Promise<GateVerdict> {
  if (gates === undefined || gates.length === 0) return 'allow'
  let verdict: GateVerdict = 'allow'
  for (const gate of gates) {
    let answer: unknown
    try {
      answer = await gate(real, access, tool)
    } catch {
      return 'deny'
    }
    if (answer === 'deny') return 'deny'
    if (answer === 'hide') verdict = 'hide'
    else if (answer !== 'allow') return 'deny'
  }
  return verdict
}
