// Interop with the Go BabelQueue SDK (github.com/babelqueue/babelqueue-go and its pulsar transport
// module from the Go module proxy, over the pure-Go apache/pulsar-client-go), through the real broker.
// Peer: test/interop/peers/go. While the proxy does not serve the SDK module, every scenario is
// recorded as not run (with the proxy's answer); BQ_INTEROP_REQUIRE=go turns that into a failure.
import { defineInteropSuite } from './support/scenarios.js';

// encoding/json decodes every JSON number in a map[string]any into float64.
const types = {
  text: 'string',
  int: 'float64',
  price: 'float64',
  negative: 'float64',
  zero: 'float64',
  maxSafe: 'float64',
  half: 'float64',
  quarter: 'float64',
  yes: 'bool',
  no: 'bool',
  nothing: 'nil',
  nested: {
    list: ['float64', 'string', { three: 'float64' }, [], 'nil'],
    empty: {},
    deeper: { a: { b: { c: 'string' } } },
  },
};

defineInteropSuite({
  sdk: 'go',
  name: 'Go',
  lang: 'go',
  dataTypes: types,
  failureException: '*errors.errorString',
  routedPublish: 'the Go SDK has no API to publish with a bq-job other than the body job',
  delayedPublish: {
    unsupported: 'the Go SDK has no delayed publish for Pulsar (App.Publish / Transport.Publish take no delay)',
  },
});
