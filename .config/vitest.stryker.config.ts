import { defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config.js";

// Under mutation testing every randomised suite runs with a fixed seed and run count, so a kill is reproducible.
export default mergeConfig(
  base,
  defineConfig({ test: { env: { WORKQUEUE_SEED: "20261202", WORKQUEUE_RUNS_SCALE: "0.25" } } }),
);
