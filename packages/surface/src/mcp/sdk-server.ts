import { createRequire } from 'node:module'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'

export const SERVER_NAME = 'hands'
/** This package's version, read from its package.json (two levels up from both src/mcp and dist/mcp). */
export const SERVER_VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version

/**
 * The SDK server hands serves on, with no handler yet: it needs only the MCP SDK, so it can
 * answer `initialize` before the tools (contracts, runtimes) have loaded.
 */
export function newMcpServer(): Server {
  return new Server({ name: SERVER_NAME, version: SERVER_VERSION }, { capabilities: { tools: {}, resources: { listChanged: true }, prompts: {}, logging: {} } })
}
