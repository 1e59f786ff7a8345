import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: new URL("..", import.meta.url).pathname,
    include: ["properties/test/**/*.test.ts"],
    testTimeout: 60_000,
  },
});
