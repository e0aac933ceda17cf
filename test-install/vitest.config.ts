import shared from '../vitest.shared.ts'

// Installs from a real registry and builds node-pty from source: minutes, not seconds (the
// consumer's set-up took 100 s on an idle 2-core machine and over 300 s beside the other test
// packages on a slower one; the bounds only catch a hang). Every package is packed once
// (test/global-setup.ts) and its tarball shared by every test file.
export default { ...shared, test: { ...shared.test, testTimeout: 600_000, hookTimeout: 900_000, globalSetup: ['test/global-setup.ts'] } }
