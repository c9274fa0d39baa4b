// Interop with the Go BabelQueue SDK 1.8.0 (github.com/babelqueue/babelqueue-go and its pulsar transport
// module, built from the vendored release tarball, over the pure-Go apache/pulsar-client-go), through the
// real broker. Peer: test/interop/peers/go, built by scripts/interop/setup-go.mjs; a peer that cannot be
// built fails the run, naming the step.
import { defineInteropSuite } from './support/scenarios.js';

// The peer hands the SDK json.Number values (exact text), but the SDK's Decode unmarshals data into a
// map[string]any, where encoding/json makes every JSON number a float64.
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

// What the Go SDK lacks, and how the peer stays on its public API anyway: App.Publish and the SDK's own
// Transport.Publish (its envelope and bq-* projection), under a Producer from the transport's documented
// Client seam (pulsar.WithClient) that adds what was asked for.
const seam = (what: string) =>
  `The Go SDK has no ${what} for Pulsar: the peer publishes with App.Publish through the SDK's own Transport ` +
  "(its envelope and bq-* projection), built with the transport's Client seam (pulsar.WithClient), whose Producer";

defineInteropSuite({
  sdk: 'go',
  name: 'Go',
  lang: 'go',
  dataTypes: types,
  // App passes the handler's error to Annotate, which writes its Go type (%T): fmt.Errorf without %w.
  failureException: '*errors.errorString',
  routedPublish: {
    note: `${seam('publish with a bq-job other than the body job')} then sets bq-job.`,
  },
  routesOnBqJob:
    "The Go SDK routes on the body's job (App: Decode, then Envelope.URN()) and ignores bq-job: in this test its " +
    "worker, given a handler for each of the two URNs, ran the body job's handler.",
  delayedPublish: {
    note: `${seam('delayed publish')} adds pulsar-client-go's DeliverAfter and bq-delay.`,
  },
  // The SDK's otel module (Publish, WrapHandler), with the OpenTelemetry SDK's tracetest in-memory exporter in the peer.
  otel: {
    note:
      "Through trace_id only: the Go SDK's Pulsar transport neither sends nor surfaces headers (PublishWithHeaders " +
      'falls back to a plain publish), so otel.Publish sends no traceparent and WrapHandler never reads ours. Each ' +
      'consumer span is a child of the remote parent that both sides derive from trace_id: same trace, but not a ' +
      'child of the producer span.',
  },
});
