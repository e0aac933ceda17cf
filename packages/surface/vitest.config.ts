import shared from '../../vitest.shared.ts'

// The tests that start `hands` run the built bin; test/global-setup.ts builds it (turbo: cached when unchanged) unless turbo just did.
export default { ...shared, test: { ...shared.test, globalSetup: ['test/global-setup.ts'] } }
