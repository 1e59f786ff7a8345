import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

// Mutation testing of the oracle (npm run mutate:oracle): a mutant of the oracle must make a wrong queue
// pass, the reference queue fail, or a counterexample change. The suite that checks the oracle's findings on the
// wrong queues runs, with a fixed seed and a quarter of its runs, as under .config/vitest.stryker.config.ts: the gate's
// wrong queues (gate.test.ts, diagnose.test.ts, which also calls the diagnosis and the independence probe directly),
// those that need odd keys, deep queues and long streaks (strength.test.ts, without its deep cases, which a fixed
// shape leaves out), the reference (reference.test.ts), and
// each untimed rule blamed for a one-call defect (invariants.test.ts). A run is by hand, not in CI, with concurrency 1;
// the scope (.config/stryker.oracle.json) holds sequential/diagnose.ts, sequential/independence.ts, the helpers of
// core/facts.ts and the untimed checks of core/invariants.ts (line ranges: §10.1, §10.5 to §4–§9: 193 mutants in 4 minutes on a shared 2-core machine; a
// survivor costs a whole run of these suites, about 25 s).
// The timed checks (core/timed-invariants.ts) and the rest of the oracle need the timed suites as killers (about 25 s a mutant): not yet.
// Scores per file: README.md, "Mutation testing".
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    env: { WORKQUEUE_SEED: "20261202", WORKQUEUE_RUNS_SCALE: "0.25", WORKQUEUE_SHAPE: "both" },
    include: [
      "properties/test/sequential/invariants.test.ts",
      "properties/test/sequential/gate.test.ts",
      "properties/test/sequential/diagnose.test.ts",
      "properties/test/sequential/reference.test.ts",
      "properties/test/sequential/strength.test.ts",
    ],
  },
});
