// The one rule for printing what a message carries (ids, URNs, errors, properties, bodies) to a terminal or a log.
// Whoever can publish to a topic writes those values: raw, a control character moves the cursor, clears the
// screen or retitles the terminal, and a line break forges a log line of its own.

/**
 * The characters that are escaped: C0 (U+0000–U+001F), DEL (U+007F), C1 (U+0080–U+009F), the line and paragraph
 * separators (U+2028, U+2029, line breaks to some log viewers) and the bidirectional overrides (U+202A–U+202E,
 * U+2066–U+2069), which make a value read differently from what it is.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROLS_BUT_LINE_FEED = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

const BEYOND_C0 = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

const SHORT: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeOne(char: string): string {
  const code = char.charCodeAt(0);
  return SHORT[char] ?? (code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16)}`);
}

/** `text` with every control character written as an escape (`\n`, `\x1b`, `\u202e`); the rest as is. */
export function escapeControls(text: string): string {
  return text.replace(CONTROLS, escapeOne);
}

/** As escapeControls, but line feeds are kept: for a text whose line breaks are the layout's own. */
export function escapeControlsExceptLineFeed(text: string): string {
  return text.replace(CONTROLS_BUT_LINE_FEED, escapeOne);
}

/**
 * A value from a message, quoted: `"…"` with `\` and `"` escaped and every control character written as an
 * escape, so it cannot end its field, its line or change the terminal. `null`/`undefined` are `-`.
 */
export function quoted(value: unknown): string {
  if (value === null || value === undefined) return '-';
  const text = typeof value === 'string' ? value : String(value);
  return `"${escapeControls(text.replace(/[\\"]/g, '\\$&'))}"`;
}

/**
 * A block of several lines that may hold message text (a stack trace, an indented body): control characters
 * escaped except the line feed, and every line after the first indented, so no line can pass for a log line of
 * its own.
 */
export function indentedBlock(text: string, indent = '    '): string {
  return escapeControlsExceptLineFeed(text)
    .split('\n')
    .map((line, index) => (index === 0 || line.startsWith(indent) ? line : `${indent}${line}`))
    .join('\n');
}

/**
 * JSON text for a terminal: `JSON.stringify` escapes C0, and this escapes DEL, C1 and the other characters
 * above too (as `\u00XX`), so the output is the same JSON and holds no raw control character.
 */
export function terminalJson(value: unknown, space?: number): string {
  const text = JSON.stringify(value, null, space) ?? 'null';
  // JSON.stringify writes C0 inside strings as escapes: a line feed or tab left is the layout's own.
  return text.replace(BEYOND_C0, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * A URL (or a text naming URLs) without user info: `http://ops:s3cret@host` → `http://***@host`, so an error
 * that names a broker never prints its credentials.
 */
export function withoutUserInfo(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/giu, '$1***@');
}
