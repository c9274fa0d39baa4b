// The native message adapter reads each value through the addon at most once (each getter there builds its value
// anew), while every caller still gets a property map of its own.
import { NativeMessageAdapter } from '../../../../lib/pulsar/native/adapter.js';

function nativeMessage() {
  const calls = { properties: 0, redeliveryCount: 0, messageId: 0, data: 0 };
  const message = {
    calls,
    getData: () => {
      calls.data += 1;
      return Buffer.from('{}');
    },
    getProperties: () => {
      calls.properties += 1;
      // As the addon returns them: an Array carrying the pairs as named members.
      return Object.assign([], { 'bq-job': 'urn:babel:orders:created', 'bq-attempts': '0' }) as unknown as Record<
        string,
        string
      >;
    },
    getRedeliveryCount: () => {
      calls.redeliveryCount += 1;
      return 2;
    },
    getMessageId: () => {
      calls.messageId += 1;
      return { toString: () => '(1,2,-1,-1)' };
    },
    getTopicName: () => 'persistent://public/default/orders',
    getPublishTimestamp: () => 0,
    getPartitionKey: () => '',
  };
  return message;
}

describe('NativeMessageAdapter', () => {
  it('calls into the addon once per value, however often it is read', () => {
    const raw = nativeMessage();
    const message = new NativeMessageAdapter(raw);
    for (let i = 0; i < 3; i++) {
      message.getProperties();
      message.getRedeliveryCount();
      message.getMessageId();
    }
    expect(raw.calls).toMatchObject({ properties: 1, redeliveryCount: 1, messageId: 1 });
    expect(message.getRedeliveryCount()).toBe(2);
    expect(String(message.getMessageId())).toBe('(1,2,-1,-1)');
  });

  it('gives each caller a plain property map of its own', () => {
    const message = new NativeMessageAdapter(nativeMessage());
    const first = message.getProperties();
    first['bq-job'] = 'changed';
    const second = message.getProperties();
    expect(Array.isArray(second)).toBe(false);
    expect(second).toEqual({ 'bq-job': 'urn:babel:orders:created', 'bq-attempts': '0' });
    expect(second).not.toBe(first);
  });

  it('reads the body anew each time, so a handler that changes its copy cannot change what a retry copy carries', () => {
    const raw = nativeMessage();
    const message = new NativeMessageAdapter(raw);
    message.getData()[0] = 0x20;
    expect(message.getData().toString()).toBe('{}');
    expect(raw.calls.data).toBe(2);
  });
});
