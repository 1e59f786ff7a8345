/**
 * Just enough XML for a JUnit report: elements with attributes and text, escaped so that the document is
 * well-formed whatever the implementation printed.
 */

/**
 * Makes `text` safe as XML 1.0 character data or an attribute value: the five special characters become entities,
 * and every character that XML 1.0 does not allow in a document at all — the C0 controls other than tab, newline
 * and carriage return (such as the ESC of an ANSI colour code), lone surrogates, U+FFFE and U+FFFF — becomes a
 * visible `\u001b`-style escape instead, so that nothing the implementation printed is lost.
 */
export function escapeXml(text: string): string {
  return text
    .replace(
      // biome-ignore lint/suspicious/noControlCharactersInRegex: matching the control characters is the point
      /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
    )
    .replace(/[&<>"']/g, (c) => `&${{ "&": "amp", "<": "lt", ">": "gt", '"': "quot", "'": "apos" }[c]};`);
}

/** An element: its name, attributes, and children (elements already rendered) or text. */
export function element(
  name: string,
  attributes: Record<string, string | number>,
  content: readonly string[] | string = [],
): string {
  const attrs = Object.entries(attributes)
    .map(([key, value]) => ` ${key}="${escapeXml(String(value))}"`)
    .join("");
  if (typeof content === "string") return `<${name}${attrs}>${escapeXml(content)}</${name}>`;
  if (content.length === 0) return `<${name}${attrs}/>`;
  return `<${name}${attrs}>\n${content.join("\n")}\n</${name}>`; // no indentation: it would change the text
}
