// Interop with the Python BabelQueue SDK (babelqueue[pulsar] from PyPI, its PulsarTransport over the
// official pulsar-client wheel), through the real broker. Peer: test/interop/peers/python/peer.py.
import { defineInteropSuite } from './support/scenarios.js';

const types = {
  text: 'str',
  int: 'int',
  price: 'int',
  negative: 'int',
  zero: 'int',
  maxSafe: 'int',
  half: 'float',
  quarter: 'float',
  yes: 'bool',
  no: 'bool',
  nothing: 'NoneType',
  nested: { list: ['int', 'str', { three: 'float' }, [], 'NoneType'], empty: {}, deeper: { a: { b: { c: 'str' } } } },
};

defineInteropSuite({
  sdk: 'python',
  name: 'Python',
  lang: 'python',
  dataTypes: types,
  failureException: 'RuntimeError',
  routedPublish: {},
  routesOnBqJob: true,
  delayedPublish: {
    note:
      'The Python SDK has no delayed publish for Pulsar (BabelQueue.publish / PulsarTransport.publish take no delay): ' +
      "the peer sends the SDK's own envelope (EnvelopeCodec) and bq-* projection through the official pulsar-client's deliver_after, with bq-delay.",
  },
});
