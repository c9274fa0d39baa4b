// Runs the snippet of docs/pulsar-features.md#client-options (readme-snippets/pulsar-options.module.ts) against
// the real broker on the client under test: the settings reach the broker, and on native a report above the
// broker's maxMessageSize goes through in chunks.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { ConsoleLogger, Logger, type INestMicroservice } from '@nestjs/common';
import { onNative, serviceUrl, uniqueTopic, waitFor, webUrl } from '../../support/broker.js';

jest.setTimeout(60_000);

describe('docs/pulsar-features.md client options snippet (live broker)', () => {
  const topic = uniqueTopic('reports');
  let app: INestMicroservice | undefined;

  beforeAll(() => {
    process.env.PULSAR_URL = serviceUrl();
    process.env.REPORTS_TOPIC = topic;
    Logger.overrideLogger(false);
  });

  afterAll(async () => {
    await app?.close();
    Logger.overrideLogger(new ConsoleLogger());
    delete process.env.PULSAR_URL;
    delete process.env.REPORTS_TOPIC;
  });

  it('publishes and consumes with the settings shown; a report above maxMessageSize on native', async () => {
    const snippet = await import('./readme-snippets/pulsar-options.module.js');
    app = await snippet.bootstrapReports();
    const reports = app.get(snippet.ReportsService);
    const controller = app.get(snippet.ReportsController);
    const size = onNative() ? 5 * 1024 * 1024 + 1024 : 64 * 1024;
    await reports.publish(1, 'r'.repeat(size));
    await waitFor('the report handled', () => controller.received.get(1) === size);
    const stats = (await (await fetch(`${webUrl()}/admin/v2/persistent/public/default/${topic}/stats`)).json()) as {
      subscriptions: Record<string, { consumers: Array<{ consumerName?: string }> }>;
    };
    expect(stats.subscriptions.babelqueue?.consumers.map((c) => c.consumerName)).toEqual(['reports-worker']);
  });
});
