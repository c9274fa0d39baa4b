// README snippet: a batch handler, tried with the testing kit (no broker).
import { describe, expect, it } from '@jest/globals';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, Payload } from '@nestjs/microservices';
import { BabelBatchContext, BabelHandler, BabelNonRetriableError, BabelPulsarServer } from '../../../../lib/index.js';
import { BabelQueueTestHarness, InMemoryPulsar } from '../../../../lib/testing/index.js';

interface Reading {
  sensor: string;
  celsius: number;
}

@Controller()
class ReadingsController {
  static readonly stored: Reading[] = [];

  // Up to 50 readings per call; a batch waits at most 200 ms to fill.
  @BabelHandler('urn:babel:sensors:reading', { batch: { maxMessages: 50, maxWaitMs: 200 } })
  store(@Payload() readings: Reading[], @Ctx() batch: BabelBatchContext) {
    readings.forEach((reading, index) => {
      // Only this message is dead-lettered; the others of the batch are acknowledged.
      if (reading.celsius < -273.15) batch.fail(index, new BabelNonRetriableError(`${reading.sensor}: impossible`));
      else ReadingsController.stored.push(reading);
    });
  }
}

@Module({ controllers: [ReadingsController] })
class SensorsModule {}

describe('ReadingsController', () => {
  it('stores a batch of readings and dead-letters the impossible one alone', async () => {
    const pulsar = new InMemoryPulsar();
    const server = new BabelPulsarServer({ client: pulsar, topics: 'sensors' });
    const app = await NestFactory.createMicroservice(SensorsModule, { strategy: server, logger: false });
    await app.listen();
    const harness = await BabelQueueTestHarness.attach(server, pulsar);
    try {
      const sent = await Promise.all(
        [20.5, -300, 21].map((celsius) => harness.publish('urn:babel:sensors:reading', { sensor: 's1', celsius })),
      );
      const outcomes = await Promise.all(sent.map((message) => message.outcome()));
      expect(outcomes.map(({ kind }) => kind)).toEqual(['handled', 'dead-lettered', 'handled']);
      expect(outcomes[1]!.deadLetter?.properties['bq-dead-letter-error']).toBe('s1: impossible');
      expect(ReadingsController.stored.map(({ celsius }) => celsius)).toEqual([20.5, 21]);
    } finally {
      await harness.close();
      await app.close();
    }
  });
});
