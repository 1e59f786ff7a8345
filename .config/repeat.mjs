// `npm run test:repeat -- N`: runs the whole suite N times in a row (default 10) and stops at the first failure,
// so a flaky test shows itself before CI finds it. Builds once; each run is a fresh vitest process.
// `npm run test:loaded -- N` (`--loaded`): the same on a loaded machine, as on a shared CI runner: one busy
// `node -e "for(;;){}"` per core runs beside the suite (default 3 runs), every run is made even after a failure,
// each run's time is printed, the hogs are killed at the end, and the exit code is 1 if any run failed.
import { spawn, spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";

const loaded = process.argv.includes("--loaded");
const counts = process.argv.slice(2).filter((arg) => arg !== "--loaded");
const times = Number(counts[0] ?? (loaded ? 3 : 10));
if (!Number.isInteger(times) || times < 1) {
  console.error(`test:repeat: expected a positive number of runs, got \`${counts[0]}\``);
  process.exit(2);
}
const name = loaded ? "test:loaded" : "test:repeat";
const run = (command, args) => spawnSync(command, args, { stdio: "inherit" }).status;
// The whole build, as `npm test`'s pretest makes it: the suites start dist/ (serve-module, bundles).
if (run("npm", ["run", "build", "--silent"]) !== 0) process.exit(1);
const hogs = loaded
  ? Array.from({ length: availableParallelism() }, () =>
      spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }),
    )
  : [];
const stopHogs = () => {
  for (const hog of hogs.splice(0)) hog.kill("SIGKILL");
};
process.on("exit", stopHogs);
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    stopHogs();
    process.exit(130);
  });
}
if (loaded) console.log(`${name}: ${hogs.length} CPU hogs started (one per core), pids ${hogs.map((h) => h.pid)}`);
const results = [];
for (let i = 1; i <= times; i++) {
  const start = Date.now();
  const status = run("npx", ["vitest", "run", "--config", ".config/vitest.config.ts", "--reporter=dot"]);
  const line = `run ${i} of ${times} ${status === 0 ? "passed" : "FAILED"} in ${((Date.now() - start) / 1000).toFixed(1)} s`;
  results.push({ status, line });
  console.log(`${name}: ${line}`);
  if (status !== 0 && !loaded) process.exit(1);
}
stopHogs();
if (loaded) for (const { line } of results) console.log(`${name}: ${line}`);
const failed = results.filter((r) => r.status !== 0).length;
console.log(failed === 0 ? `${name}: ${times} consecutive runs passed` : `${name}: ${failed} of ${times} runs FAILED`);
process.exit(failed === 0 ? 0 : 1);
