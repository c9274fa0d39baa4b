// The dispatchRate option on its own and on the server: a whole number of messages a second, an optional admin URL
// and token, nothing else.
import { checkDispatchRate } from '../../../../lib/nest/options/dispatch-rate-option.js';
import { raiseStandardError } from '../../../../lib/options/option-table.js';
import { BabelPulsarServer } from '../../../../lib/nest/index.js';
import { InMemoryPulsar } from '../../../../lib/testing/index.js';

const check = (value: unknown) => checkDispatchRate(value, 'options.dispatchRate', raiseStandardError);

describe('dispatchRate option', () => {
  it('is off when absent or false', () => {
    expect(check(undefined)).toBeUndefined();
    expect(check(false)).toBeUndefined();
  });

  it('keeps perSecond, and adminUrl and token when given', () => {
    expect(check({ perSecond: 100 })).toEqual({ perSecond: 100 });
    expect(check({ perSecond: 5, adminUrl: 'https://broker:8443', token: 'abc' })).toEqual({
      perSecond: 5,
      adminUrl: 'https://broker:8443',
      token: 'abc',
    });
  });

  it('refuses a rate the broker cannot hold: not a whole number, or below 1', () => {
    for (const perSecond of [0, -3, 0.5, '100', undefined, Number.NaN])
      expect(() => check({ perSecond })).toThrow(/options\.dispatchRate\.perSecond must be an integer >= 1/);
  });

  it('refuses another shape, an unknown key, a URL that is not http(s) and a blank token', () => {
    expect(() => check(100)).toThrow(/options\.dispatchRate must be \{ perSecond, adminUrl\?, token\? \} or false/);
    expect(() => check({ perSecond: 1, rate: 2 })).toThrow(
      /unknown key\(s\) rate \(allowed: perSecond, adminUrl, token\)/,
    );
    expect(() => check({ perSecond: 1, adminUrl: 'pulsar://broker:6650' })).toThrow(
      /options\.dispatchRate\.adminUrl must be the admin API's http\(s\) URL/,
    );
    expect(() => check({ perSecond: 1, adminUrl: 'nope' })).toThrow(/adminUrl must be/);
    expect(() => check({ perSecond: 1, token: ' ' })).toThrow(
      /options\.dispatchRate\.token must be a non-blank string/,
    );
  });

  it('is a server option', () => {
    const client = new InMemoryPulsar();
    expect(() => new BabelPulsarServer({ client, topics: 'o', dispatchRate: { perSecond: 10 } })).not.toThrow();
    expect(() => new BabelPulsarServer({ client, topics: 'o', dispatchRate: { perSecond: 0 } })).toThrow(
      /options\.dispatchRate\.perSecond must be an integer >= 1, got the number 0/,
    );
  });
});
