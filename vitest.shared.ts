/** Shared vitest settings: workspace packages resolve to their TypeScript source. */
const conditions = ['hands-source', 'module', 'node', 'import', 'default']

export default {
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two test files at a time per package (vitest's default here is one, a core less than the two
    // there are): most of a file's time is waiting on the processes it starts, not CPU.
    maxWorkers: 2,
  },
}
