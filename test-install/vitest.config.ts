import shared from '../vitest.shared.ts'

// Installs from a real registry and builds node-pty from source: minutes, not seconds. Every
// package is packed once (test/global-setup.ts) and its tarball shared by every test file.
export default { ...shared, test: { ...shared.test, testTimeout: 600_000, hookTimeout: 300_000, globalSetup: ['test/global-setup.ts'] } }
