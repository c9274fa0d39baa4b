// DeferredProducer and isNotAuthorized: a retry or dead-letter producer the broker refused for lack of permission.
import { jest } from '@jest/globals';
import { PulsarWebSocketError } from '../../../../lib/pulsar/websocket/index.js';
import {
  DeferredProducer,
  isNotAuthorized,
  ProducerNotAuthorizedError,
} from '../../../../lib/nest/server/refused-producer.js';
import type { PulsarProducer } from '../../../../lib/pulsar/client-types.js';

const TOPIC = 'persistent://public/default/orders.dlq';
const forbidden = () =>
  new PulsarWebSocketError('Broker rejected producer: HTTP 403 Forbidden - Not authorized', {
    code: 'HandshakeRejected',
    status: 403,
    brokerMessage: 'Not authorized',
  });

describe('isNotAuthorized', () => {
  it('recognises the refusals of both clients, not authentication failures', () => {
    expect(isNotAuthorized(forbidden())).toBe(true);
    expect(isNotAuthorized(new Error('Failed to create producer: AuthorizationError'))).toBe(true);
    const unauthenticated = new PulsarWebSocketError('HTTP 401 Unauthorized - Authentication required', {
      code: 'HandshakeRejected',
      status: 401,
      brokerMessage: 'Authentication required',
    });
    expect(isNotAuthorized(unauthenticated)).toBe(false);
    expect(isNotAuthorized(new Error('Failed to create producer: TimeOut'))).toBe(false);
    expect(isNotAuthorized(null)).toBe(false);
  });
});

describe('DeferredProducer', () => {
  function setup(results: Array<'refuse' | 'ok'>) {
    let now = 0;
    const sent: unknown[] = [];
    let created = 0;
    const real: PulsarProducer = {
      send: async (message) => {
        sent.push(message);
        return null;
      },
      flush: async () => undefined,
      close: jest.fn(async (): Promise<void> => undefined),
      getTopic: () => TOPIC,
    };
    const create = async () => {
      created += 1;
      if (results.shift() === 'refuse') throw forbidden();
      return real;
    };
    const producer = new DeferredProducer(
      TOPIC,
      'dead-letter records',
      create,
      new ProducerNotAuthorizedError(TOPIC, 'dead-letter records', forbidden()),
      { retryEveryMs: 1000, owns: true, now: () => now },
    );
    return { producer, sent, real, advance: (ms: number) => (now += ms), created: () => created };
  }

  it('rejects with the refusal, asks the broker again at most once per interval, then writes through', async () => {
    const { producer, sent, advance, created } = setup(['refuse', 'ok']);
    const message = { data: Buffer.from('x') };
    expect(producer.isConnected()).toBe(false);
    await expect(producer.send(message)).rejects.toThrow(`not authorized to produce to ${TOPIC}`);
    expect(created()).toBe(0); // within the interval: the stored refusal
    advance(1000);
    await expect(producer.send(message)).rejects.toBeInstanceOf(ProducerNotAuthorizedError);
    expect(created()).toBe(1);
    expect(producer.state().refused).toMatch(/needed for dead-letter records/);
    advance(1000);
    await producer.send(message);
    expect(sent).toEqual([message]);
    expect(producer.state()).toEqual({ topic: TOPIC, purpose: 'dead-letter records', refused: null });
    expect(producer.isConnected()).toBe(true);
  });

  it('closes the producer it created when it owns it', async () => {
    const { producer, real, advance } = setup(['ok']);
    advance(1000);
    await producer.send({ data: Buffer.from('x') });
    await producer.close();
    expect(real.close).toHaveBeenCalledTimes(1);
  });
});

describe('DeferredProducer retrying in the background', () => {
  it('creates the producer after a grant with no send asking for it, and stops asking once it has it', async () => {
    const results: Array<'refuse' | 'ok'> = ['refuse', 'ok'];
    let created = 0;
    const real: PulsarProducer = {
      send: async () => null,
      flush: async () => undefined,
      close: async () => undefined,
      getTopic: () => TOPIC,
    };
    const producer = new DeferredProducer(
      TOPIC,
      'dead-letter records',
      async () => {
        created += 1;
        if (results.shift() === 'refuse') throw forbidden();
        return real;
      },
      new ProducerNotAuthorizedError(TOPIC, 'dead-letter records', forbidden()),
      { retryEveryMs: 10, owns: true, retryInBackground: true },
    );
    try {
      for (let i = 0; i < 500 && !producer.isConnected(); i++) await new Promise((r) => setTimeout(r, 10));
      expect(producer.isConnected()).toBe(true);
      expect(producer.state().refused).toBeNull();
      await new Promise((r) => setTimeout(r, 50));
      expect(created).toBe(2);
    } finally {
      await producer.close();
    }
  });
});
