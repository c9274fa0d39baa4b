// Request/response on the broker, with the client under test (native or WebSocket): the scenario the testing kit
// plays too (test/unit/testing/request-reply.test.ts).
import { jest } from '@jest/globals';
import type { PulsarClientLike } from '../../../lib/pulsar/client-types.js';
import { newClient, receiveN, uniqueTopic, waitFor, webUrl } from '../../support/broker.js';
import {
  expectDeadLetteredRequestFails,
  expectHandMadeRequestAnswered,
  expectRetriedRequestRepliesOnce,
  expectRoundTrips,
  expectTimeoutAndLateReplyDropped,
  startRequestReply,
  type RequestReplyRig,
} from '../../support/request-reply-scenario.js';

jest.setTimeout(60_000);

/** The subscriptions of a topic, from the admin API ([] once the topic is gone). */
async function subscriptionsOf(topic: string): Promise<string[]> {
  const path = topic.replace('persistent://', 'persistent/');
  const response = await fetch(`${webUrl()}/admin/v2/${path}/subscriptions`);
  if (response.status === 404) return [];
  return (await response.json()) as string[];
}

describe('request/response (broker)', () => {
  let pulsar: PulsarClientLike;
  let rig: RequestReplyRig;
  let topic: string;
  beforeEach(async () => {
    pulsar = newClient();
    topic = uniqueTopic('rpc');
    rig = await startRequestReply(pulsar, topic);
  });
  afterEach(async () => {
    await rig.close();
    await pulsar.close();
  });

  it('answers send() with the handler return value', () => expectRoundTrips(rig));
  it('errors with the handler error text and class once the request is dead-lettered', () =>
    expectDeadLetteredRequestFails(rig));
  it('replies once to a request that was retried', () => expectRetriedRequestRepliesOnce(rig));
  it('errors after the time-out, and drops and counts the late reply', () => expectTimeoutAndLateReplyDropped(rig));
  it('answers a request made by hand with the documented reply', () =>
    expectHandMadeRequestAnswered(pulsar, topic, `persistent://public/default/${uniqueTopic('by-hand')}`, async (c) => {
      const [message] = await receiveN(c, 1);
      return message!;
    }));

  it('removes its reply subscription when the client closes', async () => {
    await expectRoundTrips(rig);
    const replyTopic = rig.client.replyTopic!;
    expect(await subscriptionsOf(replyTopic)).toEqual(['bq-replies']);
    await rig.client.close();
    await waitFor('the reply subscription to go', async () => (await subscriptionsOf(replyTopic)).length === 0);
  });
});
