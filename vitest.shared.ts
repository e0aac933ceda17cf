/** Shared vitest settings: workspace packages resolve to their TypeScript source. */
const conditions = ['hands-source', 'module', 'node', 'import', 'default']

export default {
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ['test/**/*.test.ts'],
    // Bounds that only catch a hang: on a 2-core VM whose speed halves when its host is busy, a
    // test that takes 10 s alone has taken 30 s and more beside the other packages' tests.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Two test files at a time per package (vitest's default here is one, a core less than the two
    // there are): most of a file's time is waiting on the processes it starts, not CPU.
    maxWorkers: 2,
  },
}
