// Attempts reconciliation between bq-attempts and the body (docs/contract.md#retries).
import { reconcileAttempts } from '../../../../lib/pulsar/binding.js';

describe('reconcileAttempts', () => {
  it.each([
    [0, 0, 0],
    [0, 2, 2],
    [2, 5, 5],
    [5, 1, 5],
    [4, 0, 4],
    [3, 3, 3],
  ])('body %i, redelivery %i → %i without a property (44)', (bodyAttempts, redeliveryCount, expected) => {
    expect(reconcileAttempts({ bodyAttempts, redeliveryCount })).toBe(expected);
    expect(reconcileAttempts({ bodyAttempts, attemptsProperty: undefined, redeliveryCount })).toBe(expected);
  });

  it('bq-attempts "4" with body 0 and redelivery 0 → 4 (45)', () => {
    expect(reconcileAttempts({ bodyAttempts: 0, attemptsProperty: '4', redeliveryCount: 0 })).toBe(4);
  });

  it('bq-attempts "1" with body 5 → 1: the property wins over the body (46)', () => {
    expect(reconcileAttempts({ bodyAttempts: 5, attemptsProperty: '1', redeliveryCount: 0 })).toBe(1);
  });

  it.each([
    [''],
    ['-1'],
    ['+1'],
    [' 1'],
    ['1 '],
    ['1.0'],
    ['abc'],
    ['2147483648'],
    ['99999999999999999999'],
    ['1e3'],
    ['0x10'],
    ['١'],
    ['\u00a01'],
  ])('bq-attempts %j is unusable: the body attempts are used (47)', (attemptsProperty) => {
    expect(reconcileAttempts({ bodyAttempts: 3, attemptsProperty, redeliveryCount: 0 })).toBe(3);
  });

  it.each([
    ['007', 7],
    ['0', 0],
    ['2147483647', 2147483647],
    ['0002147483647', 2147483647],
  ])('bq-attempts %j → %i (48)', (attemptsProperty, expected) => {
    expect(reconcileAttempts({ bodyAttempts: 3, attemptsProperty, redeliveryCount: 0 })).toBe(expected);
  });

  it('a redelivery count above both wins, with no −1 (49)', () => {
    expect(reconcileAttempts({ bodyAttempts: 1, attemptsProperty: '2', redeliveryCount: 6 })).toBe(6);
    expect(reconcileAttempts({ bodyAttempts: 1, redeliveryCount: 1 })).toBe(1);
  });

  it('a property of 0 with a higher redelivery count still takes the max', () => {
    expect(reconcileAttempts({ bodyAttempts: 9, attemptsProperty: '0', redeliveryCount: 2 })).toBe(2);
  });

  it('never returns a negative count, and ignores a garbage body or redelivery count', () => {
    expect(reconcileAttempts({ bodyAttempts: -5, redeliveryCount: 0 })).toBe(0);
    expect(reconcileAttempts({ bodyAttempts: undefined, redeliveryCount: 0 })).toBe(0);
    expect(reconcileAttempts({ bodyAttempts: '3', redeliveryCount: 0 })).toBe(0);
    expect(reconcileAttempts({ bodyAttempts: 1.5, redeliveryCount: 0 })).toBe(0);
    expect(reconcileAttempts({ bodyAttempts: 2, redeliveryCount: -1 })).toBe(2);
    expect(reconcileAttempts({ bodyAttempts: 2, redeliveryCount: NaN })).toBe(2);
  });
});
