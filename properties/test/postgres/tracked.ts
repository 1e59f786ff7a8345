/** Whether `promise` has settled, as seen after the calls already made. */
export function tracked(promise: Promise<unknown>): () => boolean {
  let settled = false;
  const mark = () => {
    settled = true;
  };
  void promise.then(mark, mark);
  return () => settled;
}
