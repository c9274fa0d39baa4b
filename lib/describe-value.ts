/**
 * A value as an option error shows it, with its type: `the string "3"`, `the number -1`, `null`, `an array`.
 * `got 3` alone hides that the 3 was a string read from an environment variable.
 */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return `the string ${JSON.stringify(value)}`;
    case 'number':
    case 'bigint':
    case 'boolean':
      return `the ${typeof value} ${String(value)}`;
    case 'function':
      return 'a function';
    case 'symbol':
      return `the symbol ${String(value)}`;
    default: {
      const name = (value as object).constructor?.name;
      return name && name !== 'Object' ? `a ${name}` : 'an object';
    }
  }
}
