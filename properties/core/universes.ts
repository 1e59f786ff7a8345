/**
 * The items a check draws from. Real bugs hide in keys that differ only by case or Unicode normalisation, keys that
 * look like numbers, keys special to plain objects, long keys, keys that collide in a small hash table, and, for a
 * JavaScript queue that is generic in its item type, values that a `Map` tells apart but a string conversion,
 * `JSON.stringify`, `===` or `indexOf` does not ([docs/spec.md §1.1](../../docs/spec.md#§1-items)).
 */

/**
 * The items a suite draws from.
 *
 * @inline
 */
export interface ItemUniverse {
  /** The universe's name, which reports show and replay tokens carry. @defaultValue `"custom"` */
  readonly name?: string;
  /** A handful of items, drawn often; the first one is where shrinking leads. Include the awkward ones. */
  readonly few: readonly unknown[];
  /** The `i`-th of many distinct items, for deep queues (`i` from 0 to several thousand). */
  readonly many: (i: number) => unknown;
  /** Values that are not items ([docs/spec.md §1.2](../../docs/spec.md#§1-items)), sent now and then by the robust profile. */
  readonly invalid: readonly unknown[];
}

/**
 * `text` as the engine's single copy of that string (V8 internalizes property names): two such strings compare by
 * pointer. The model finds items by linear scans on purpose, so with thousands queued, comparing freshly built
 * strings character by character took most of the gate's time.
 */
function interned(text: string): string {
  return Object.keys({ [text]: 0 })[0] as string;
}

/** The many string items made so far, by index: each is made and interned once, however many runs use it. */
const manyKeys: string[] = [];

/** Two long keys that differ only in their last character: a queue that truncates or hashes a prefix merges them. */
const long = "namespace-with-a-long-name/".repeat(12);

/**
 * String items, as the wire protocol carries them: plain keys; the empty string; keys that differ only by case
 * (`"a"`, `"A"`) or only by Unicode normalisation (`"é"` composed and decomposed); integer-like keys (`"1"`,
 * `"01"`); keys special to plain objects (`"__proto__"`, `"constructor"`); a non-ASCII key; two keys with the same
 * Java `hashCode` (`"Aa"`, `"BB"`); and two long keys that differ only at the end.
 *
 * @example
 * ```ts
 * import { checkConformance, stringItems } from "workqueue-spec/properties";
 *
 * // A queue whose items are strings only, as over the wire:
 * await checkConformance((options) => new MyQueue(options), { items: stringItems });
 * ```
 *
 * @public
 */
export const stringItems: ItemUniverse = {
  name: "strings",
  few: [
    "a",
    "b",
    "",
    "A",
    "1",
    "01",
    "\u00e9",
    "e\u0301",
    "Aa",
    "BB",
    "__proto__",
    "constructor",
    "ключ/ü",
    `${long}1`,
    `${long}2`,
  ],
  many: (i) => (manyKeys[i] ??= interned(`ns/k${i}`)),
  invalid: [undefined, null],
};

/** An object item: JSON-equal to its twin, told apart only by identity; its name shows in reports. */
function objectItem(name: string): object {
  const item = { key: "default/web" };
  Object.defineProperty(item, "toString", { value: () => name, enumerable: false });
  return Object.freeze(item);
}

/**
 * Any values, for JavaScript queues (the default of `checkConformance`): the string items, and `0`, `-0` (the same
 * item as `0`), `NaN` (the same item as itself, though `NaN !== NaN`), the number `1` beside the string `"1"`,
 * `true`, and two distinct objects that are equal as JSON, each reused within a run. They catch queues that coerce
 * items to strings, persist them as JSON, find them with `indexOf` or `===`, or test them for truthiness.
 *
 * @example
 * ```ts
 * import { checkConformance } from "../sequential/check-conformance.js";
 * import { anyItems } from "./universes.js";
 *
 * const report = await checkConformance((options) => new MyQueue(options), { items: anyItems });
 * console.log(report.items); // "any values"
 * ```
 *
 * @internal
 */
export const anyItems: ItemUniverse = {
  ...stringItems,
  name: "any values",
  few: [...stringItems.few, 0, -0, Number.NaN, 1, true, objectItem("{key} #1"), objectItem("{key} #2")],
};
