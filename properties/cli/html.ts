/**
 * The gate's `--html FILE`: the failure of a run as a timeline page (report/timeline.ts), when it has overlapping
 * calls to draw. The file is claimed before anything starts, so that a path that cannot be written is a usage error
 * and not a finding after the check; a run that can make no overlapping calls is refused once the implementation
 * is connected; and when no page is written, the gate says so and why.
 */
import { open, rm, stat, writeFile } from "node:fs/promises";
import type { SubjectFactory } from "../core/subject.js";
import type { GateOutcome } from "../report/outcome.js";
import { overlapTimeline } from "../report/timeline.js";
import { answersPromises } from "../sequential/check-conformance.js";
import { oneLine, UsageError } from "./args.js";

/** The page's file, claimed: whether this run made it (empty) and may remove it again. */
export interface ClaimedPage {
  /** `--html`'s value. */
  readonly path: string;
  /** Whether the file was made by the claim, and holds nothing yet. */
  readonly made: boolean;
}

/**
 * Makes sure that a page can be written at `path` before anything starts, leaving a file already there as it is
 * (it is opened to append, and nothing is appended).
 *
 * @throws UsageError naming `--html` and the path, with the reason, when it cannot be written.
 */
export async function claimPage(path: string): Promise<ClaimedPage> {
  const existed = await stat(path).then(
    () => true,
    () => false,
  );
  try {
    await (await open(path, "a")).close();
  } catch (error) {
    throw new UsageError(`--html: cannot write the page: ${oneLine((error as Error).message)}`);
  }
  return { path, made: !existed };
}

/** Removes the claimed file when the claim made it: a run that writes no page leaves no empty one behind. */
async function releasePage(page: ClaimedPage): Promise<void> {
  if (page.made) await rm(page.path, { force: true });
}

/** What the gate checks, as far as the page is concerned: over the protocol with its features, or a module's factory. */
export type Target =
  | { readonly protocol: true; readonly features: readonly string[] }
  | { readonly protocol: false; readonly factory: SubjectFactory<unknown>; readonly time: boolean };

/**
 * Refuses a page for a run of `target` that can have no failure with overlapping calls to draw: over the protocol,
 * an implementation that does not announce the `concurrent` feature is given one call at a time; in process, a
 * queue whose `get` answers at once (not a promise) is given no overlapping calls (docs/spec.md §10.8). A factory
 * that throws is left to the check, which reports it as a breach.
 *
 * @throws UsageError naming `--html` and its value, and why.
 */
export async function refuseNothingToDraw(page: ClaimedPage, target: Target): Promise<void> {
  const why = target.protocol
    ? target.features.includes("concurrent")
      ? undefined
      : 'the implementation does not announce the "concurrent" feature, so it is given one call at a time'
    : // A factory or queue that throws here is refused by the check itself, which says how (exit 3).
      (await answersPromises(target.factory, target.time).catch(() => true))
      ? undefined
      : "the queue's get answers at once, not a promise, so it is given one call at a time";
  if (why !== undefined) {
    throw new UsageError(`--html ${page.path}: nothing to draw: ${why} (a timeline draws overlapping calls)`);
  }
}

/**
 * Writes the page of `outcome`'s failure to the claimed file when it has overlapping calls to draw, and answers the
 * line that says what was written, or that nothing was and why; `replay` words the replay line the page shows. After
 * a usage error, whose own line says why, it only removes the file the claim made, and answers nothing.
 *
 * @throws UsageError naming `--html` when the page cannot be written after all.
 */
export async function writePage(
  outcome: GateOutcome,
  page: ClaimedPage,
  replay: (token: string) => string,
): Promise<string | undefined> {
  if (outcome.error?.kind === "usage error") {
    await releasePage(page);
    return undefined;
  }
  const counterexample = outcome.report?.counterexample;
  const html =
    counterexample === undefined
      ? undefined
      : overlapTimeline(counterexample, { replay: replay(counterexample.replay) });
  if (html !== undefined) {
    await writeFile(page.path, html).catch((error: Error) => {
      throw new UsageError(`--html: cannot write the page: ${oneLine(error.message)}`);
    });
    return `timeline of the failure written to ${page.path}`;
  }
  await releasePage(page);
  const why =
    outcome.report === undefined
      ? "the check did not reach a verdict"
      : counterexample === undefined
        ? "the implementation conforms, so there is no failure to draw"
        : counterexample.overlapping?.length === 0
          ? "a call never answered, so there are no answered calls to draw"
          : "the counterexample is a sequence of calls made one at a time, which its numbered steps show";
  const kept = page.made ? "" : "; the file already there is left as it was";
  return `no timeline written to ${page.path}: ${why}${kept}`;
}
