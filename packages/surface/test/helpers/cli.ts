import { chmodSync } from 'node:fs'
import { join } from 'node:path'
import { stageInstall } from '../../../shell-runtime/test/stage-install.ts'
import { tempRoot } from './tmp.ts'

/**
 * The `hands` bin as `npm install` ships it: the built `dist/cli/main.js` on plain node, with no
 * loader and no pnpm in between (test/global-setup.ts builds it unless turbo just did). A start
 * costs what it costs a user; through tsx every module of typebox and the MCP SDK crosses tsx's
 * loader thread, about three times the CPU. `pnpm hands` itself (the README's way to run the
 * source) is tested once, in cli.test.ts.
 */
export const HANDS_BIN = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js')

/** The command line that runs `hands ARGS`: node, then the bin. */
export function handsArgv(args: string[]): [string, ...string[]] {
  return [process.execPath, HANDS_BIN, ...args]
}

/**
 * `hands` installed from its build (dist/ and every package it loads) into a new temporary
 * directory every user may read, for a test that runs it as another user (setpriv to nobody): a
 * checkout under /root or in a 0700 directory is out of that user's reach. `argv` is handsArgv
 * for that copy; `remove` deletes the directory.
 */
export function installedHands(): { argv: (args: string[]) => [string, ...string[]]; remove: () => void } {
  const install = tempRoot('hands-install-')
  try {
    chmodSync(install.dir, 0o755)
    stageInstall([join(import.meta.dirname, '..', '..')], install.dir)
  } catch (err) {
    install.remove()
    throw err
  }
  const bin = join(install.dir, 'node_modules', '@hands', 'surface', 'dist', 'cli', 'main.js')
  return { argv: (args) => [process.execPath, bin, ...args], remove: install.remove }
}
