import shared from '../../vitest.shared.ts'

// The host fixtures run built: test/global-setup.ts bundles them against dist/ (building it unless turbo just did).
export default { ...shared, test: { ...shared.test, globalSetup: ['test/global-setup.ts'] } }
