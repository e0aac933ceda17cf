import { join } from 'node:path'

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
