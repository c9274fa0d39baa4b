// Without @opentelemetry/api (an optional peer) the library neither traces nor fails.
import { jest } from '@jest/globals';

jest.unstable_mockModule('@opentelemetry/api', () => {
  throw new Error("Cannot find module '@opentelemetry/api'");
});

const { loadOpenTelemetry, openTelemetry, startPublishSpan, inProcessSpan } =
  await import('../../../lib/otel/tracing.js');
const { ConsumerMetrics } = await import('../../../lib/otel/metrics.js');
const { EnvelopeCodec } = await import('../../../lib/index.js');

describe('OpenTelemetry absent', () => {
  it('loads nothing, starts no span, runs handlers as they are', async () => {
    await expect(loadOpenTelemetry()).resolves.toBeNull();
    expect(openTelemetry()).toBeNull();
    expect(startPublishSpan('urn:babel:a:b', 'orders')).toBeUndefined();
    expect(ConsumerMetrics.create()).toBeUndefined();
    const envelope = EnvelopeCodec.make('urn:babel:a:b', {}, { queue: 'orders' });
    await expect(
      inProcessSpan(
        { urn: 'urn:babel:a:b', topic: 'orders', envelope, properties: {}, pulsarMessageId: '(1,2,-1,-1)' },
        async () => 42,
      ),
    ).resolves.toBe(42);
  });
});
