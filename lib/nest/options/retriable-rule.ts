import { raiseStandardError, type RaiseOptionError } from '../../options/option-table.js';
import { describeValue } from '../../describe-value.js';

/**
 * A user's rule of which failures are worth a retry: `true` retries, `false` dead-letters at once, `undefined`
 * leaves the decision to the next rule (a handler's rule, then the module's, then the built-in Nest rule).
 */
export type RetriableRule = (error: unknown) => boolean | undefined;

/** Checks an `isRetriable` option (`where` names it), with an error saying what is allowed. */
export function checkRetriableRule(
  value: unknown,
  where: string,
  raise: RaiseOptionError = raiseStandardError,
): RetriableRule | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'function')
    return raise(`${where} must be a function (error) => boolean | undefined, got ${describeValue(value)}`, 'type');
  return value as RetriableRule;
}

/**
 * The first answer of `rules` (in order, undefined ones skipped) that is true or false, else `builtIn`'s (pure
 * apart from the rules themselves). A rule that throws or answers anything else is passed over and reported through
 * `onBrokenRule`: a broken rule must not decide a message's fate.
 */
export function composeRetriable(
  rules: ReadonlyArray<RetriableRule | undefined>,
  builtIn: (error: unknown) => boolean,
  onBrokenRule: (problem: string) => void,
): (error: unknown) => boolean {
  const own = rules.filter((rule): rule is RetriableRule => rule !== undefined);
  if (own.length === 0) return builtIn;
  return (error) => {
    for (const rule of own) {
      let answer: unknown;
      try {
        answer = rule(error);
      } catch (thrown) {
        onBrokenRule(
          `isRetriable threw (${thrown instanceof Error ? thrown.message : String(thrown)}); the next rule decides`,
        );
        continue;
      }
      if (answer === true || answer === false) return answer;
      if (answer !== undefined)
        onBrokenRule(
          `isRetriable returned ${describeValue(answer)} instead of true, false or undefined; the next rule decides`,
        );
    }
    return builtIn(error);
  };
}
