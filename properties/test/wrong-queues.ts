/**
 * Deliberately wrong controller loops, each with one defect the workers property must catch (docs/spec.md §15): built
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

/** The loop that forgets an item whatever its handler did: a failure is then retried from a count of zero. */
export const forgetsAfterAFailureToo: typeof runWorkers = (queue, handler, options) => {
  const forgetful: typeof queue = {
    take: (o) => queue.take(o),
    forget: (item) => queue.forget(item),
    retry: (item) => {
      queue.forget(item);
      return queue.retry(item);
    },
    done: (item) => queue.done(item),
  };
  return runWorkers(forgetful, handler, options);
};
