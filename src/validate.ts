/**
 * Argument checks shared by the queue's methods. Each throws synchronously, before any state changes, with a
 * message that names the offending value and its type ([docs/spec.md §1](../docs/spec.md#§1-items), [§3](../docs/spec.md#§3-construction)).
 *
 * @internal
 */

/** Renders a value for an error message: strings quoted, everything else as `String` shows it. */
export function show(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  try {
    return String(value);
  } catch {
    // `String` throws for objects without a usable `toString`, such as `Object.create(null)`.
    return Object.prototype.toString.call(value);
  }
}

/** The type word of an error message: `typeof`, except that `null` is `null`. */
function typeWord(value: unknown): string {
  return value === null ? "null" : typeof value;
}

/** Builds the house error message: ``Expected `name` to be <what>, got `value` (type)``. */
export function expected(name: string, what: string, value: unknown): string {
  return `Expected \`${name}\` to be ${what}, got \`${show(value)}\` (${typeWord(value)})`;
}

/**
 * Throws a `TypeError` unless `item` is an item (docs/spec.md §1.2): anything but `undefined` and `null`, which
 * `get` uses to say "nothing" and the protocol cannot carry.
 */
export function assertItem(item: unknown): void {
  if (item === undefined || item === null) {
    throw new TypeError(expected("item", "a value other than undefined or null", item));
  }
}

/** Throws a `RangeError` unless `maxRetries` is a non-negative integer or `Infinity` ([docs/spec.md §3](../docs/spec.md#§3-construction)). */
export function assertMaxRetries(maxRetries: unknown): asserts maxRetries is number {
  if (!(maxRetries === Number.POSITIVE_INFINITY || (Number.isInteger(maxRetries) && (maxRetries as number) >= 0))) {
    throw new RangeError(expected("maxRetries", "a non-negative integer or Infinity", maxRetries));
  }
}

/**
 * Throws a `TypeError` unless `options` is `undefined` or an object (docs/spec.md §13.4, §14.6, §15.5); `example`
 * shows what a valid one looks like.
 */
export function assertOptions(options: unknown, example: string): asserts options is object | undefined {
  if (options !== undefined && (typeof options !== "object" || options === null)) {
    throw new TypeError(expected("options", `undefined or an object such as ${example}`, options));
  }
}

/** Throws a `TypeError` unless `signal` is `undefined` or an `AbortSignal` ([docs/spec.md §13.4](../docs/spec.md#§13-draining), [§14.6](../docs/spec.md#§14-waiting-for-work), [§15.5](../docs/spec.md#§15-the-controller-loop)). */
export function assertSignal(signal: unknown): asserts signal is AbortSignal | undefined {
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new TypeError(expected("signal", "undefined or an AbortSignal", signal));
  }
}

/** The `signal` of the options of `take` and `shutDownWithDrain`, after checking them ([docs/spec.md §13.4](../docs/spec.md#§13-draining), [§14.6](../docs/spec.md#§14-waiting-for-work)). */
export function signalOf(options: unknown): AbortSignal | undefined {
  assertOptions(options, "{ signal }");
  const signal = (options as { signal?: unknown } | undefined)?.signal;
  assertSignal(signal);
  return signal;
}

/** Throws a `TypeError` unless `value` is a function (docs/spec.md §15.5); `what` says what is expected. */
export function assertFunction(name: string, value: unknown, what = "a function"): void {
  if (typeof value !== "function") throw new TypeError(expected(name, what, value));
}

/** Throws a `RangeError` unless `concurrency` is a positive integer ([docs/spec.md §15.5](../docs/spec.md#§15-the-controller-loop)). */
export function assertConcurrency(concurrency: unknown): asserts concurrency is number {
  if (!(Number.isInteger(concurrency) && (concurrency as number) > 0)) {
    throw new RangeError(expected("concurrency", "a positive integer", concurrency));
  }
}

/** Throws unless `delayMs` is a finite number: a `TypeError` for a non-number, a `RangeError` for `NaN` and ±`Infinity` ([docs/spec.md §17.8](../docs/spec.md#§17-delayed-adds)). */
export function assertDelay(delayMs: unknown): asserts delayMs is number {
  if (typeof delayMs !== "number") throw new TypeError(expected("delayMs", "a number", delayMs));
  if (!Number.isFinite(delayMs)) throw new RangeError(expected("delayMs", "a finite number", delayMs));
}

/** Throws a `TypeError` unless `value` is an object whose `methods` are functions, and whose `optional` ones are functions or absent ([docs/spec.md §3.3](../docs/spec.md#§3-construction)). */
export function assertShape(name: string, value: unknown, what: string, methods: string[], optional: string[]): void {
  const record = value as Record<string, unknown> | null;
  const valid =
    typeof value === "object" &&
    record !== null &&
    methods.every((m) => typeof record[m] === "function") &&
    optional.every((m) => record[m] === undefined || typeof record[m] === "function");
  if (!valid) throw new TypeError(expected(name, what, value));
}
