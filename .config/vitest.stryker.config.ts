import { configDefaults, defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config.js";

// Under mutation testing every randomised suite runs with a fixed seed and a quarter of its runs, so a kill is
// reproducible. The suites that drive child processes through the built dist/ (the protocol, the reports, the
// README's blocks) are left out: the Stryker sandbox has no dist/, and they check the gate and the package, not
// src/ or model/; so are the API-docs suite, which checks comments, and the strength suite, which checks that the
// gate finds deep bugs in wrong queues (the deep runs are left out here, see properties/test/settings.ts), and the
// timed ones (time-strength, and timed-seeds, which checks that each of 10 seeds finds a timed wrong queue: 82 of the
// 134 s these suites take here, and no mutant that only it kills); and the coverage suite, which checks the generator,
// not src/ or model/; and the vectors suite, which checks the committed vector files and runs the Python example (not in the sandbox); and the PostgreSQL suites,
// whose code (src/postgres/) `npm run mutate:postgres` mutates on its own: LeaseModel's own suite covers model/;
// and the replay suite, which runs the vitest helpers' printed replays in a project of its own (the gate, not src/);
// and the package suite, which runs the bundled commands of dist/bin/, and the README's samples, which run npm start;
// and the gate's verdicts under a CPU hog and with a stalled event loop, which serve queues from dist/ and check the
// gate's timing, not src/ or model/; and the escapes suite, which checks that the gate's deep runs find wrong
// queues of its own (at a quarter of the runs its fixed seed misses one); and the --html and concurrent-rounds suites,
// which run fixtures through dist/ and the Python example (not in the sandbox), and check the gate.
export default mergeConfig(
  base,
  defineConfig({
    test: {
      env: { WORKQUEUE_SEED: "20261202", WORKQUEUE_RUNS_SCALE: "0.25", WORKQUEUE_SHAPE: "both" },
      exclude: [
        ...configDefaults.exclude,
        "properties/test/reports/protocol.test.ts",
        "properties/test/reports/reports.test.ts",
        "properties/test/package/readme.test.ts",
        "properties/test/package/api-docs.test.ts",
        "properties/test/sequential/strength.test.ts",
        "properties/test/time/time-strength.test.ts",
        "properties/test/time/timed-seeds.test.ts",
        "properties/test/sequential/coverage.test.ts",
        "properties/test/reports/vectors.test.ts",
        "properties/test/sequential/helper-replay.test.ts",
        "properties/test/package/package.test.ts",
        "properties/test/package/readme-samples.test.ts",
        "properties/test/sequential/loaded-verdicts.test.ts",
        "properties/test/sequential/stalled-gate.test.ts",
        "properties/test/sequential/escapes.test.ts",
        "properties/test/reports/html.test.ts",
        "properties/test/reports/concurrent.test.ts",
        "properties/test/postgres/**/*.test.ts",
      ],
    },
  }),
);
