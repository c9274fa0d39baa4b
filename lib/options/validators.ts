import { describeValue } from '../describe-value.js';
import { option, type OptionSpec } from './option-table.js';

/** A whole number >= min; `must` words the rule when "an integer >= min" does not say enough. */
export function integer(rule: { min: number; must?: string }): OptionSpec<number, number | undefined>;
export function integer(rule: { min: number; must?: string; fallback: number }): OptionSpec<number, number>;
export function integer({ min, must, fallback }: { min: number; must?: string; fallback?: number }) {
  return option<number, number | undefined>((value, name, raise) => {
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min)
      return raise(`${name} must be ${must ?? `an integer >= ${min}`}, got ${describeValue(value)}`, 'range');
    return value;
  });
}

/** One of a few strings. */
export function oneOf<const V extends string>(values: readonly V[]): OptionSpec<V, V | undefined>;
export function oneOf<const V extends string>(values: readonly V[], fallback: V, must?: string): OptionSpec<V, V>;
export function oneOf<const V extends string>(
  values: readonly V[],
  fallback: undefined,
  must: string,
): OptionSpec<V, V | undefined>;
export function oneOf<const V extends string>(values: readonly V[], fallback?: V, must?: string) {
  const listed = values.map((value) => `'${value}'`);
  const allowed = must ?? `${listed.slice(0, -1).join(', ')} or ${listed.at(-1)}`;
  return option<V, V | undefined>((value, name, raise) => {
    if (value === undefined) return fallback;
    if (!(values as readonly unknown[]).includes(value))
      return raise(`${name} must be ${allowed}, got ${describeValue(value)}`, 'type');
    return value as V;
  });
}

/** true or false. */
export function flag(fallback: boolean): OptionSpec<boolean, boolean> {
  return option<boolean, boolean>((value, name, raise) => {
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean') return raise(`${name} must be true or false, got ${describeValue(value)}`, 'type');
    return value;
  });
}

/** A non-blank string, trimmed. */
export function nonBlank(): OptionSpec<string, string | undefined>;
export function nonBlank(fallback: string): OptionSpec<string, string>;
export function nonBlank(fallback?: string) {
  return option<string, string | undefined>((value, name, raise) => {
    if (value === undefined) return fallback;
    if (typeof value !== 'string' || value.trim() === '')
      return raise(`${name} must be a non-blank string, got ${describeValue(value)}`, 'type');
    return value.trim();
  });
}

/** A function (a hook). */
export function callback<F extends (...args: never[]) => unknown>(): OptionSpec<F, F | undefined> {
  return option<F, F | undefined>((value, name, raise) => {
    if (value !== undefined && typeof value !== 'function') return raise(`${name} must be a function`, 'type');
    return value as F | undefined;
  });
}

/** Taken as given: a value the library only passes on (its own checks happen where it is used). */
export function passThrough<T>(): OptionSpec<T, T | undefined> {
  return option<T, T | undefined>((value) => value as T | undefined);
}
