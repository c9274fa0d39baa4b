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
  // babelqueue.otel (publish, wrap_handler), with the OpenTelemetry SDK's InMemorySpanExporter in the peer.
  otel: {
    note:
      "Through trace_id only: the Python SDK's PulsarTransport is no HeaderPublisher and surfaces no headers, so " +
      'otel.publish sends no traceparent and wrap_handler never reads ours. Each consumer span is a child of the ' +
      'remote parent that both sides derive from trace_id: same trace, but not a child of the producer span.',
  },
});
