// The one rule for printing message data to a terminal or a log (lib/text): control characters escaped, values
// quoted, URLs without user info.
import {
  escapeControls,
  indentedBlock,
  quoted,
  terminalJson,
  withoutUserInfo,
} from '../../../lib/text/untrusted-text.js';

/** Any C0, DEL or C1 character: what must never reach a terminal raw. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/u;

test('C0, DEL, C1, line separators and bidi overrides are escaped; other text is kept', () => {
  expect(escapeControls('\u001b[31mred\u001b]0;title\u0007\u001b[2J\u001b[H')).toBe(
    '\\x1b[31mred\\x1b]0;title\\x07\\x1b[2J\\x1b[H',
  );
  expect(escapeControls('a\nb\rc\td\u007f\u009b\u0085')).toBe('a\\nb\\rc\\td\\x7f\\x9b\\x85');
  expect(escapeControls('x\u2028y\u202ez\u2066')).toBe('x\\u2028y\\u202ez\\u2066');
  expect(escapeControls('Ayşe Çelik 😀 — ok')).toBe('Ayşe Çelik 😀 — ok');
});

test('a quoted value cannot end its field or its line', () => {
  expect(quoted('id-1')).toBe('"id-1"');
  expect(quoted('x" admin="yes')).toBe('"x\\" admin=\\"yes"');
  expect(quoted('a\\b')).toBe('"a\\\\b"');
  expect(quoted('m-1\n[Nest] 1 - ERROR [Auth] login failed')).toBe('"m-1\\n[Nest] 1 - ERROR [Auth] login failed"');
  expect(quoted(null)).toBe('-');
  expect(quoted(42)).toBe('"42"');
  for (let code = 0; code < 0xa0; code++) expect(quoted(String.fromCharCode(code))).not.toMatch(RAW_CONTROL);
});

test('a block keeps its line breaks, every later line indented; JSON stays JSON without raw controls', () => {
  expect(indentedBlock('Error: a\nERROR [Auth] forged\n    at f (x.js:1:1)\u001b[2J')).toBe(
    'Error: a\n    ERROR [Auth] forged\n    at f (x.js:1:1)\\x1b[2J',
  );
  const value = { id: 'a\u001b[31m\u009b\u007f', nested: ['\u0085'] };
  const text = terminalJson(value, 2);
  expect(text).not.toMatch(RAW_CONTROL);
  expect(JSON.parse(text)).toEqual(value);
});

test('URLs lose their user info, wherever they appear in a text', () => {
  expect(withoutUserInfo('http://ops:s3cret@127.0.0.1:9')).toBe('http://***@127.0.0.1:9');
  expect(withoutUserInfo('cannot reach http://admin:hunter2@host:8080/admin and pulsar+ssl://u@h:6651')).toBe(
    'cannot reach http://***@host:8080/admin and pulsar+ssl://***@h:6651',
  );
  expect(withoutUserInfo('http://host:8080/a@b')).toBe('http://host:8080/a@b');
});
