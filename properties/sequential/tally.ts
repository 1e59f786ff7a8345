/**
 * The tally of a check: the runs and calls it made, apart from those of shrinking, in one object that every phase
 * counts into and the progress callback reads (as fast-check's `RunExecution` collects a run's figures).
 */
import type { Plan } from "../core/commands.js";
import type { Progress } from "./options.js";

/** The runs and calls of a check so far. */
export class Tally {
  /** Runs of the survey (or the first run of a replay), and the independence probe's two. */
  runs = 0;
  /** Calls made by those runs. */
  commands = 0;
  /** Runs made while shrinking. */
  shrinkRuns = 0;
  /** Calls made by those runs. */
  shrinkCommands = 0;

  constructor(private readonly onProgress: Progress | undefined) {}

  /** Counts a run of the survey, or the first run of a replay, and says so. */
  run(plan: Plan): void {
    this.runs++;
    this.commands += plan.length;
    this.onProgress?.({ runs: this.runs, commands: this.commands });
  }

  /** Counts a run made while shrinking, and says so with the totals of both. */
  shrinking(plan: Plan): void {
    this.shrinkRuns++;
    this.shrinkCommands += plan.length;
    this.onProgress?.({ runs: this.runs + this.shrinkRuns, commands: this.commands + this.shrinkCommands });
  }

  /** Counts the independence probe: `plan` run on two fresh queues. */
  probe(plan: Plan): void {
    this.runs += 2;
    this.commands += 2 * plan.length;
  }
}
