// The lane decisions alone (pure): a key's messages one at a time in arrival order, keys independent.
import { KeyLanes, laneKeyOf } from '../../../lib/consumer/key-lanes.js';

describe('KeyLanes', () => {
  it('runs the first message of an idle key and queues the next ones of that key', () => {
    const lanes = new KeyLanes<string>();
    expect(lanes.enter('a', 'a1')).toBe('run');
    expect(lanes.enter('a', 'a2')).toBe('wait');
    expect(lanes.enter('a', 'a3')).toBe('wait');
    expect(lanes.waiting).toBe(2);
    expect(lanes.busyKeys).toBe(1);
  });

  it('keeps keys apart: a busy key does not hold another', () => {
    const lanes = new KeyLanes<string>();
    expect(lanes.enter('a', 'a1')).toBe('run');
    expect(lanes.enter('b', 'b1')).toBe('run');
    expect(lanes.enter('a', 'a2')).toBe('wait');
    expect(lanes.enter('c', 'c1')).toBe('run');
    expect(lanes.busyKeys).toBe(3);
  });

  it('hands over the next of a key in arrival order, then frees the key', () => {
    const lanes = new KeyLanes<string>();
    lanes.enter('a', 'a1');
    lanes.enter('a', 'a2');
    lanes.enter('a', 'a3');
    expect(lanes.finish('a')).toBe('a2');
    expect(lanes.isBusy('a')).toBe(true);
    expect(lanes.enter('a', 'a4')).toBe('wait');
    expect(lanes.finish('a')).toBe('a3');
    expect(lanes.finish('a')).toBe('a4');
    expect(lanes.waiting).toBe(0);
    expect(lanes.finish('a')).toBeUndefined();
    expect(lanes.isBusy('a')).toBe(false);
    expect(lanes.enter('a', 'a5')).toBe('run');
  });

  it('a finish of a key that is not busy hands over nothing', () => {
    expect(new KeyLanes<string>().finish('nobody')).toBeUndefined();
  });

  it('clear() returns what waited and forgets every lane', () => {
    const lanes = new KeyLanes<string>();
    lanes.enter('a', 'a1');
    lanes.enter('a', 'a2');
    lanes.enter('b', 'b1');
    lanes.enter('b', 'b2');
    expect(lanes.clear().sort()).toEqual(['a2', 'b2']);
    expect(lanes.waiting).toBe(0);
    expect(lanes.busyKeys).toBe(0);
    expect(lanes.enter('a', 'a3')).toBe('run');
  });
});

describe('laneKeyOf', () => {
  const message = (partitionKey: string, orderingKey?: string) => ({
    getPartitionKey: () => partitionKey,
    ...(orderingKey !== undefined && { getOrderingKey: () => orderingKey }),
  });

  it('is the ordering key when set, else the partition key, else none', () => {
    expect(laneKeyOf(message('p', 'o'))).toBe('o');
    expect(laneKeyOf(message('p', ''))).toBe('p');
    expect(laneKeyOf(message('p'))).toBe('p');
    expect(laneKeyOf(message(''))).toBeNull();
    expect(laneKeyOf(message('', ''))).toBeNull();
  });
});
