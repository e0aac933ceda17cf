/** Shared vitest settings: workspace packages resolve to their TypeScript source. */
const conditions = ['hands-source', 'module', 'node', 'import', 'default']

export default {
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
}
