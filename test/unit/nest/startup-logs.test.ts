// What start-up logs: one line per subscription (topic, subscription, type, URN -> handler), and with
// startupWarnings: false no warnings at all. Runs on the testing kit: no broker.
import 'reflect-metadata';
import { Controller, type LoggerService } from '@nestjs/common';
import { EventPattern } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { BabelHandler, BabelPulsarServer, BabelQueueModule } from '../../../lib/index.js';
import { InMemoryPulsar } from '../../../lib/testing/index.js';

@Controller()
class OrdersController {
  @BabelHandler('urn:babel:orders:created')
  created(): void {}

  @BabelHandler('urn:babel:orders:cancelled')
  cancelled(): void {}

  @EventPattern('orders.legacy')
  legacy(_data: unknown): void {}
}

@Controller()
class AuditController {
  @BabelHandler('urn:babel:audit:logged', { subscription: 'audit' })
  logged(): void {}
}

function capture(): { logger: LoggerService; lines: Array<[level: string, message: string]> } {
  const lines: Array<[string, string]> = [];
  const push = (level: string) => (message: unknown) => void lines.push([level, String(message)]);
  return {
    lines,
    logger: { log: push('log'), warn: push('warn'), error: push('error'), debug: () => {}, verbose: () => {} },
  };
}

async function boot(startupWarnings: boolean) {
  const { logger, lines } = capture();
  const moduleRef = await Test.createTestingModule({
    imports: [BabelQueueModule.forRoot({ client: new InMemoryPulsar(), topic: 'orders', startupWarnings, logger })],
    controllers: [OrdersController, AuditController],
  }).compile();
  moduleRef.useLogger(logger);
  const app = moduleRef.createNestMicroservice({ strategy: moduleRef.get(BabelPulsarServer), logger });
  await app.listen();
  await app.close();
  return lines;
}

describe('start-up logs', () => {
  it('logs one line per subscription with its type and URN -> handler map', async () => {
    const lines = await boot(true);
    const consuming = lines.filter(([, message]) => message.startsWith('consuming '));
    expect(consuming.map(([, message]) => message).sort()).toEqual([
      'consuming persistent://public/default/orders (subscription audit, Shared): urn:babel:audit:logged -> AuditController.logged',
      'consuming persistent://public/default/orders (subscription babelqueue, Shared): ' +
        'urn:babel:orders:created -> OrdersController.created, urn:babel:orders:cancelled -> OrdersController.cancelled, ' +
        'orders.legacy -> an unnamed handler',
    ]);
  });

  it('warns about the wiring by default, and not at all with startupWarnings: false', async () => {
    const warned = (await boot(true)).filter(([level]) => level === 'warn').map(([, message]) => message);
    expect(warned.some((message) => message.includes("@EventPattern('orders.legacy')"))).toBe(true);
    expect(warned.some((message) => message.includes('is consumed through 2 subscriptions'))).toBe(true);
    expect((await boot(false)).filter(([level]) => level === 'warn')).toEqual([]);
  });
});
