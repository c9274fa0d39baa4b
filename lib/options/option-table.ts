/**
 * Options are declared once, in tables: each entry is a key with its validator and default (its JSDoc is the
 * user's documentation, and the docs' option tables are generated from it: `npm run readme`). A surface (the
 * module, the server, the decorator) resolves its input through its table in one pass, raising its own error
 * class the first time.
 */

import { BabelQueueError } from '../envelope/errors.js';

/** A value of the wrong type or shape, or a number out of its range. */
export type ProblemKind = 'type' | 'range';

/** Throws the error of one surface; the message already names the option and what is allowed. */
export type RaiseOptionError = (message: string, kind?: ProblemKind) => never;

/** The error of the server, the decorator and the standalone classes: RangeError for a number out of range, else TypeError. */
export const raiseStandardError: RaiseOptionError = (message, kind) => {
  throw kind === 'range' ? new RangeError(message) : new TypeError(message);
};

/** The error of the library's own classes (the client, the outbox, the client factory): a BabelQueueError. */
export const raiseLibraryError: RaiseOptionError = (message) => {
  throw new BabelQueueError(message);
};

/** One option: how a given value (undefined when absent) becomes the value the code uses. */
export interface OptionSpec<In, Out> {
  resolve(value: unknown, name: string, raise: RaiseOptionError): Out;
  /** Carries the accepted input type to {@link OptionsInput}; never set. */
  readonly input?: In;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a table holds specs of every input and output type
export type OptionTable = Record<string, OptionSpec<any, unknown>>;

/** What a user may write: every key optional, with the type its entry accepts (and the entry's JSDoc). */
export type OptionsInput<T extends OptionTable> = {
  [K in keyof T]?: T[K] extends OptionSpec<infer In, unknown> ? In : never;
};

/** What the code reads after resolution: each entry's output, defaults applied. */
export type ResolvedOptions<T extends OptionTable> = {
  [K in keyof T]: T[K] extends OptionSpec<unknown, infer Out> ? Out : never;
};

/** Declares an option from its resolve function (the validators in ./validators.ts build the common ones). */
export function option<In, Out = In | undefined>(
  resolve: (value: unknown, name: string, raise: RaiseOptionError) => Out,
): OptionSpec<In, Out> {
  return { resolve };
}

/** The same option with a default: a table that gives the setting one declares it here, the validator stays the row's. */
export function withDefault<In, Out>(row: OptionSpec<In, Out | undefined>, fallback: Out): OptionSpec<In, Out> {
  return option<In, Out>((value, name, raise) => row.resolve(value, name, raise) ?? fallback);
}

/**
 * Resolves every entry of `table` from `input` (its keys checked separately), naming each `<prefix>.<key>` (or
 * as `nameOf` says, e.g. `@BabelHandler timeoutMs`).
 */
export function resolveOptions<T extends OptionTable>(
  table: T,
  input: Readonly<Record<string, unknown>>,
  prefix: string | ((key: string) => string),
  raise: RaiseOptionError,
): ResolvedOptions<T> {
  const nameOf = typeof prefix === 'string' ? (key: string) => `${prefix}.${key}` : prefix;
  const resolved: Record<string, unknown> = {};
  for (const key of Object.keys(table)) resolved[key] = table[key]!.resolve(input[key], nameOf(key), raise);
  return resolved as ResolvedOptions<T>;
}

/**
 * Refuses a key the table does not declare, listing those it does (and `alsoListed`, keys taken before the table
 * sees the input); `hint` may say where the key belongs.
 */
export function checkKnownKeys(
  input: Readonly<Record<string, unknown>>,
  allowed: readonly string[],
  prefix: string,
  raise: RaiseOptionError,
  hint: (key: string) => string = () => '',
  alsoListed: readonly string[] = [],
): void {
  for (const key of Object.keys(input)) {
    if (!allowed.includes(key))
      raise(
        `${prefix}.${key} is not an option${hint(key)}; allowed: ${[...allowed, ...alsoListed].join(', ')}`,
        'type',
      );
  }
}

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
