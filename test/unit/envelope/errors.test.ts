import {
  BabelQueueError,
  InvalidEnvelopeError,
  SchemaVersionRejectedError,
  UnknownUrnError,
} from '../../../lib/envelope/index.js';

describe('errors', () => {
  it('share the BabelQueueError base and carry their own names', () => {
    const errors = [
      new BabelQueueError('b'),
      new InvalidEnvelopeError('i'),
      new UnknownUrnError('urn:x'),
      new SchemaVersionRejectedError('2'),
    ];
    expect(errors.map((e) => e.name)).toEqual([
      'BabelQueueError',
      'InvalidEnvelopeError',
      'UnknownUrnError',
      'SchemaVersionRejectedError',
    ]);
    for (const e of errors) {
      expect(e).toBeInstanceOf(Error);
      expect(e).toBeInstanceOf(BabelQueueError);
      expect(e.stack).toContain(e.name);
    }
    expect(new InvalidEnvelopeError('i')).not.toBeInstanceOf(UnknownUrnError);
  });

  it('UnknownUrnError names the URN', () => {
    const error = new UnknownUrnError('urn:babel:x');
    expect(error.urn).toBe('urn:babel:x');
    expect(error.message).toContain('"urn:babel:x"');
  });

  it('SchemaVersionRejectedError names the received value with whitespace visible', () => {
    const error = new SchemaVersionRejectedError('\t1\n');
    expect(error.received).toBe('\t1\n');
    expect(error.message).toContain('"\\t1\\n"');
  });

  it('keeps a cause', () => {
    const cause = new Error('root');
    expect(new InvalidEnvelopeError('x', { cause }).cause).toBe(cause);
  });
});
