import { defineConfig } from "vitest/config";

export default defineConfig({
  // The README's example imports the package by name, as a user would; the tests run it on the sources.
  resolve: { alias: [{ find: /^workqueue-spec$/, replacement: new URL("../src/index.ts", import.meta.url).pathname }] },
  test: {
    root: new URL("..", import.meta.url).pathname,
    include: ["properties/test/**/*.test.ts"],
    // Guards against a hang, not measures of speed (docs/performance.md has those): a CPU-bound suite on a loaded
    // 2-core machine takes several times its quiet time (the coverage suite took over 60 s at a load of 9), and a
    // migration in a hook waits its turn on a busy server.
    testTimeout: 300_000,
    // Two files at a time (vitest's default on 2 cores is one): the PostgreSQL suites spend most of their time waiting
    // for the server, and each runs in a schema of its own. Every suite must pass beside another, as on a loaded
    // machine (npm run test:loaded).
    maxWorkers: 2,
    hookTimeout: 120_000,
  },
});
