/**
 * A deliberately wrong controller loop, with one defect the workers property must catch (docs/spec.md §15): built
 * on the reference loop, so that the defect is the only difference. The wrong queues of the lifecycle are the zoo of
 * `checkLifecycle`, in wrong/lifecycle.ts.
 */
import { runWorkers } from "../../src/index.js";

/** The loop with `done` outside a `finally`: after a failure, the item is never done. */
export const doneOnlyOnSuccess: typeof runWorkers = (queue, handler, options) => {
  const failed = new Set<unknown>();
  const leaky: typeof queue = {
    take: (o) => queue.take(o),
    forget: (item) => queue.forget(item),
    retry: (item) => failed.add(item) && queue.retry(item),
    done: (item) => void (failed.delete(item) || queue.done(item)),
  };
  return runWorkers(leaky, handler, options);
};
