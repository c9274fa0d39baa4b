// What a producer (publisher, outbox writer) refuses before it makes an envelope.
import { lossyDataProblem, urnProblem } from '../../../lib/envelope/producer-checks.js';

describe('urnProblem', () => {
  it.each(['urn:babel:orders:created', 'urn:a', '  urn:babel:x\t', 'URN:babel:x', 'urn:babel:catalog:item.indexed'])(
    'accepts %j',
    (urn) => expect(urnProblem(urn)).toBeNull(),
  );
  it.each([
    ['not a urn at all', /is not a URN/],
    ['urn:', /is not a URN/],
    ['urn: babel', /is not a URN/],
    ['orders.created', /is not a URN/],
    ['urn:babel:\u0000x', /is not a URN/],
    ['', /non-blank URN/],
    ['  ', /non-blank URN/],
    [42, /non-blank URN/],
  ])('refuses %j', (urn, message) => expect(urnProblem(urn)).toMatch(message));
});

describe('lossyDataProblem', () => {
  const fn = () => 1;
  it.each([
    [{ price: NaN }, 'data.price is NaN'],
    [{ price: Infinity }, 'data.price is Infinity'],
    [{ price: -Infinity }, 'data.price is -Infinity'],
    [{ note: undefined }, 'data.note is undefined'],
    [{ run: fn }, 'data.run is a function'],
    [{ tag: Symbol('x') }, 'data.tag is a symbol'],
    [{ order: { lines: [{ qty: 1 }, { qty: NaN }] } }, 'data.order.lines[1].qty is NaN'],
    [{ list: [1, undefined] }, 'data.list[1] is undefined'],
    // eslint-disable-next-line no-sparse-arrays
    [{ list: [1, , 3] }, 'data.list[1] is undefined'],
    [{ 'odd key': { deep: undefined } }, 'data["odd key"].deep is undefined'],
    [{ lookup: new Map([[1, 2]]) }, 'data.lookup is a Map'],
    [{ ids: new Set([1]) }, 'data.ids is a Set'],
  ])('names the first lossy value of %p', (data, named) => {
    expect(lossyDataProblem(data as Record<string, unknown>)).toContain(named);
  });

  it('accepts what JSON carries exactly, trusts toJSON and leaves cycles to the encoder', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(
      lossyDataProblem({
        n: 1.5,
        s: 'ğüş 😀',
        b: false,
        z: null,
        big: 10n ** 30n,
        at: new Date(0),
        nested: { list: [1, 'x', null, { ok: true }] },
        bytes: new Uint8Array([1]),
      }),
    ).toBeNull();
    expect(lossyDataProblem(cyclic)).toBeNull();
  });
});
