// An ambiguous publish can be retried safely — the rejection carries the message's
// meta.id and publish() accepts a caller-chosen id, so a retry keeps the id and consumers can deduplicate.
import 'reflect-metadata';
import { BabelPulsarClient, BabelQueueError, EnvelopeCodec, PublishError } from '../../../../lib/index.js';
import { PulsarWebSocketError } from '../../../../lib/pulsar/websocket/index.js';
import { FakeClient } from '../support/fake-client.js';

const URN = 'urn:babel:orders:created';

function setup() {
  const fake = new FakeClient();
  const client = new BabelPulsarClient({ client: fake, topic: 'orders' });
  return { fake, client };
}

const ambiguous = () =>
  new PulsarWebSocketError(
    'Failed to send message to topic persistent://public/default/orders: the connection was lost before the ' +
      'broker acknowledged it, so it may or may not have been stored (lost)',
    { code: 'ConnectionClosed', topic: 'persistent://public/default/orders' },
  );

describe('publish that may or may not have been stored', () => {
  it('rejects with the meta.id it sent, the original error as cause, and says it may have been stored', async () => {
    const { fake, client } = setup();
    await client.connect();
    const cause = ambiguous();
    fake.producers[0]!.failWith = cause;
    const error = (await client.publish(URN, { n: 1 }).catch((e: unknown) => e)) as PublishError;
    expect(error).toBeInstanceOf(PublishError);
    expect(error).toBeInstanceOf(BabelQueueError);
    expect(error.message).toContain('may or may not have been stored');
    expect(error.cause).toBe(cause);
    expect(error.mayHaveBeenStored).toBe(true);
    expect(error.topic).toBe('orders');
    const [sent] = fake.producers[0]!.sent;
    expect(sent).toBeUndefined();
    expect(error.messageId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a retry with the id from the error publishes the same meta.id and bq-message-id', async () => {
    const { fake, client } = setup();
    await client.connect();
    fake.producers[0]!.failWith = ambiguous();
    const error = (await client.publish(URN, { n: 1 }).catch((e: unknown) => e)) as PublishError;
    fake.producers[0]!.failWith = null;
    const id = await client.publish(URN, { n: 1 }, { id: error.messageId });
    expect(id).toBe(error.messageId);
    const [sent] = fake.producers[0]!.sent;
    expect(EnvelopeCodec.decode(sent!.data).envelope).toMatchObject({ meta: { id } });
    expect(sent!.properties).toMatchObject({ 'bq-message-id': id });
  });

  it('says a refused-before-sending error was not stored', async () => {
    const { fake, client } = setup();
    await client.connect();
    fake.producers[0]!.failWith = new PulsarWebSocketError('MessageTooBig', { code: 'MessageTooBig' });
    const error = (await client.publish(URN, {}).catch((e: unknown) => e)) as PublishError;
    expect(error.mayHaveBeenStored).toBe(false);
  });

  it.each([[''], ['  '], [42], [null]])('rejects the id %p before sending', async (id) => {
    const { client } = setup();
    await expect(client.publish(URN, {}, { id: id as string })).rejects.toThrow(/options\.id/);
  });
});
