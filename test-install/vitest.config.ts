import shared from '../vitest.shared.ts'

// Installs from a real registry and builds node-pty from source: minutes, not seconds.
export default { ...shared, test: { ...shared.test, testTimeout: 600_000, hookTimeout: 300_000 } }
