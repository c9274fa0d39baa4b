// Request/response on the testing kit: the same scenario the broker suite plays on both clients.
import { jest } from '@jest/globals';
import { InMemoryPulsar } from '../../../lib/testing/index.js';
import type { PulsarConsumer } from '../../../lib/pulsar/client-types.js';
import {
  expectDeadLetteredRequestFails,
  expectHandMadeRequestAnswered,
  expectRetriedRequestRepliesOnce,
  expectRoundTrips,
  expectTimeoutAndLateReplyDropped,
  startRequestReply,
  type RequestReplyRig,
} from '../../support/request-reply-scenario.js';

jest.setTimeout(20_000);

describe('request/response (testing kit)', () => {
  let pulsar: InMemoryPulsar;
  let rig: RequestReplyRig;
  beforeEach(async () => {
    pulsar = new InMemoryPulsar();
    rig = await startRequestReply(pulsar, 'rpc');
  });
  afterEach(() => rig.close());

  it('answers send() with the handler return value', () => expectRoundTrips(rig));
  it('errors with the handler error text and class once the request is dead-lettered', () =>
    expectDeadLetteredRequestFails(rig));
  it('replies once to a request that was retried', () => expectRetriedRequestRepliesOnce(rig));
  it('errors after the time-out, and drops and counts the late reply', () => expectTimeoutAndLateReplyDropped(rig));
  it('answers a request made by hand with the documented reply', () =>
    expectHandMadeRequestAnswered(
      pulsar,
      'rpc',
      'persistent://public/default/by-hand-replies',
      (consumer: PulsarConsumer) => consumer.receive(5000),
    ));

  it('writes one reply per request, whatever the attempts', async () => {
    await expectRetriedRequestRepliesOnce(rig);
    await expectDeadLetteredRequestFails(rig);
    const topic = rig.client.replyTopic!;
    expect(topic).toMatch(/^persistent:\/\/public\/default\/bq-replies-[0-9a-f-]{36}$/);
    // flaky + barrier, declined + barrier: four requests, four replies.
    expect(pulsar.published(topic).map(({ properties }) => properties['bq-reply-status'])).toEqual([
      'ok',
      'ok',
      'error',
      'ok',
    ]);
  });
});
