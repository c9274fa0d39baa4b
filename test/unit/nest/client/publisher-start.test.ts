// The publisher's background start with brokerAtStart 'optional': a broker that does not answer is waited for,
// but a missing pulsar-client is not a broker outage and is reported once, never retried.
import { jest } from '@jest/globals';
import { BabelQueuePublisherStart } from '../../../../lib/nest/client/publisher-start.js';
import { NativeClientMissingError } from '../../../../lib/pulsar/client-factory.js';

const lines = () => {
  const seen: { level: string; text: string }[] = [];
  const record = (level: string) => (text: unknown) => void seen.push({ level, text: String(text) });
  return { seen, logger: { log: record('log'), warn: record('warn'), error: record('error'), debug: record('debug') } };
};

afterEach(() => jest.useRealTimers());

it('reports a missing pulsar-client once and does not retry', async () => {
  jest.useFakeTimers();
  const { seen, logger } = lines();
  const missing = new NativeClientMissingError(
    'the package "pulsar-client" is not installed: run "npm install pulsar-client"',
  );
  const connect = jest.fn(() => Promise.reject(missing));
  const start = new BabelQueuePublisherStart({ connect }, { brokerAtStart: 'optional', topic: 'orders' }, logger);
  start.onApplicationBootstrap();
  await start.settled();
  await jest.advanceTimersByTimeAsync(120_000);
  expect(connect).toHaveBeenCalledTimes(1);
  expect(seen).toEqual([{ level: 'error', text: missing.message }]);
  expect(start.startProblem()).toMatch(/persistent:\/\/public\/default\/orders cannot be created: .*pulsar-client/);
  await start.onApplicationShutdown();
});

it('waits for a broker that does not answer, with one line, and one more once connected', async () => {
  jest.useFakeTimers();
  const { seen, logger } = lines();
  let calls = 0;
  const connect = jest.fn(() => (++calls < 3 ? Promise.reject(new Error('connection refused')) : Promise.resolve()));
  const start = new BabelQueuePublisherStart({ connect }, { brokerAtStart: 'optional', topic: 'orders' }, logger);
  start.onApplicationBootstrap();
  await start.settled();
  await jest.advanceTimersByTimeAsync(120_000);
  expect(connect.mock.calls.length).toBeGreaterThanOrEqual(3);
  expect(seen.map((line) => line.level)).toEqual(['warn', 'log']);
  expect(start.startProblem()).toBeNull();
  await start.onApplicationShutdown();
});
