/**
 * What the models say and how they compare: the error message of [docs/spec.md §1.2](../docs/spec.md#§1-items) and [§3](../docs/spec.md#§3-construction), and item equality
 * ([§1.1](../docs/spec.md#§1-items)). One copy for every model.
 */

/** Renders a value for an error message the way [docs/spec.md §1.2](../docs/spec.md#§1-items) and [§3](../docs/spec.md#§3-construction) show it: strings quoted, the rest as `String` shows it. */
export function show(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** The error message of [docs/spec.md §1.2](../docs/spec.md#§1-items) and [§3](../docs/spec.md#§3-construction). */
export function message(name: string, what: string, value: unknown): string {
  return `Expected \`${name}\` to be ${what}, got \`${show(value)}\` (${value === null ? "null" : typeof value})`;
}

/** [§1.1](../docs/spec.md#§1-items): items are compared as `Map` keys are (SameValueZero), which is what `Array#includes` does. */
export function same<T>(a: T | undefined, b: T): boolean {
  return [a].includes(b);
}

/** The sum of `values`, added from the first to the last, as docs/spec.md §19.9 orders the additions. */
export function sum(values: readonly number[]): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}
