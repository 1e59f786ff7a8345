// `npm run test:repeat -- N`: runs the whole suite N times in a row (default 10) and stops at the first failure,
// so a flaky test shows itself before CI finds it. Builds once; each run is a fresh vitest process.
import { spawnSync } from "node:child_process";

const times = Number(process.argv[2] ?? 10);
if (!Number.isInteger(times) || times < 1) {
  console.error(`test:repeat: expected a positive number of runs, got \`${process.argv[2]}\``);
  process.exit(2);
}
const run = (args) => spawnSync("npx", args, { stdio: "inherit" }).status;
if (run(["tsc", "-p", ".config/tsconfig.build.json"]) !== 0) process.exit(1);
for (let i = 1; i <= times; i++) {
  const start = Date.now();
  const status = run(["vitest", "run", "--config", ".config/vitest.config.ts", "--reporter=dot"]);
  console.log(
    `test:repeat: run ${i} of ${times} ${status === 0 ? "passed" : "FAILED"} in ${((Date.now() - start) / 1000).toFixed(1)} s`,
  );
  if (status !== 0) process.exit(1);
}
console.log(`test:repeat: ${times} consecutive runs passed`);
