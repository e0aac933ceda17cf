import { createRequire } from 'node:module'
import { SHELL_BACKGROUND, SHELL_RUN } from '@hands/contracts'
import { refuse } from '../errors.ts'

type NodePty = typeof import('node-pty')

const require = createRequire(import.meta.url)

/** How to make node-pty load, for the host's operator. */
export const PTY_FIX =
  'node-pty builds from source when it is installed: install a C++ toolchain and Python (Debian: apt-get install -y build-essential python3), point npm at the Node headers if the machine cannot download them (npm_config_nodedir=<node prefix>), then run npm rebuild node-pty'

let loaded: { pty: NodePty; problem: null } | { pty: null; problem: string } | null = null

function load(): { pty: NodePty; problem: null } | { pty: null; problem: string } {
  if (loaded === null) {
    try {
      loaded = { pty: require('node-pty') as NodePty, problem: null }
    } catch (e) {
      loaded = { pty: null, problem: `node-pty could not be loaded: ${(e as Error).message.split('\n')[0]}` }
    }
  }
  return loaded
}

/**
 * Why background shells cannot run on this host (node-pty or its native module failed to
 * load), or null when they can. Loads node-pty on the first call; later calls reuse the answer.
 */
export function ptyProblem(): string | null {
  return load().problem
}

/** node-pty, loaded on first use; a `pty_unavailable` ToolError when it cannot load. */
export function loadPty(): NodePty {
  const { pty, problem } = load()
  if (pty !== null) return pty
  throw refuse(
    'pty_unavailable',
    `${SHELL_BACKGROUND} cannot start a shell on this host: ${problem}.`,
    `Run the work with ${SHELL_RUN}, which uses pipes and still works; background shells come back once the host's operator makes node-pty load.`,
  )
}
