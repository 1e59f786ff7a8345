import { defineConfig } from "vitest/config";

export default defineConfig({
  // The README's example imports the package by name, as a user would; the tests run it on the sources.
  resolve: { alias: [{ find: /^workqueue-spec$/, replacement: new URL("../src/index.ts", import.meta.url).pathname }] },
  test: {
    root: new URL("..", import.meta.url).pathname,
    include: ["properties/test/**/*.test.ts"],
    testTimeout: 60_000,
  },
});
