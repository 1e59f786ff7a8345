/**
 * The runs a check draws, as fast-check arbitraries, from its qualified options: `fc.sample` of them with the
 * check's `runs` and seed gives the very runs its survey makes, and fast-check's path of one replays it.
 */
import * as fc from "fast-check";
import { type Delays, type Scenario, scenario } from "../core/arbitraries.js";
import { type ConformanceOptions, driverDefaults, type SettledOptions, settle } from "./options.js";

/** The runs of a check with `options`; with `replayPath`, fast-check's hint for the sequence to replay. */
export function runsFrom(options: SettledOptions, replayPath: string | undefined): fc.Arbitrary<Scenario> {
  const spec = {
    profile: options.profile,
    items: options.items,
    maxCommands: options.maxCommands,
    replayPath,
    finite: options.finiteMaxRetries,
    shutDown: options.shutDown,
    time: options.time ? options.delays : undefined,
  };
  const shape = options.shape;
  if (shape === "both") return fc.oneof(scenario({ ...spec, shape: "few" }), scenario({ ...spec, shape: "many" }));
  if (shape !== "all") return scenario({ ...spec, shape });
  return fc.oneof(
    { weight: 2, arbitrary: scenario({ ...spec, shape: "few" }) },
    { weight: 2, arbitrary: scenario({ ...spec, shape: "many" }) },
    { weight: 1, arbitrary: scenario({ ...spec, shape: "deep" }) },
  );
}

/**
 * The runs a check with `options` draws, as fast-check arbitraries: `fc.sample` of it with the check's `runs` and
 * seed gives the very runs its survey makes (the benchmarks plan them alone, to weigh the gate against its model).
 * `delays` are those the check's queues can be given: `any` in process, where `NaN` can be passed; `finite`
 * otherwise.
 *
 * @internal
 */
export function runsOf(
  options: ConformanceOptions,
  replayPath: string | undefined,
  delays: Delays = driverDefaults.delays,
): fc.Arbitrary<Scenario> {
  return runsFrom(settle(options, { ...driverDefaults, delays }), replayPath);
}
