// What start-up logs: one line per subscription (topic, subscription, type, URN -> handler), and with
// startupWarnings: false no warnings at all (the module's wiring checks and the server's own); the documented
// logger that drops the information lines. Runs on the testing kit: no broker.
import 'reflect-metadata';
import { Controller, Injectable, type LoggerService } from '@nestjs/common';
import { EventPattern, MessagePattern } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { BabelHandler, BabelPulsarServer, BabelQueueModule } from '../../../../lib/index.js';
import { BabelQueueTestHarness, InMemoryPulsar, useInMemoryPulsar } from '../../../../lib/testing/index.js';
import { QuietLogsModule } from '../../../integration/module/readme-snippets/quiet-logs.module.js';

@Controller()
class OrdersController {
  @BabelHandler('urn:babel:orders:created')
  created(): void {}

  @BabelHandler('urn:babel:orders:cancelled')
  cancelled(): void {}

  @EventPattern('orders.legacy')
  legacy(_data: unknown): void {}

  @MessagePattern('orders.rpc')
  rpc(_data: unknown): void {}

  @BabelHandler('urn:babel:orders:elsewhere', { connection: 'nowhere' })
  elsewhere(): void {}
}

/** A @BabelHandler on a provider: Nest never binds it (a wiring warning). */
@Injectable()
class MisplacedHandlers {
  @BabelHandler('urn:babel:orders:misplaced')
  misplaced(): void {}
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
    providers: [MisplacedHandlers],
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
        'orders.legacy -> an unnamed handler, orders.rpc -> an unnamed handler',
    ]);
  });

  it('warns about the wiring by default, and not at all with startupWarnings: false', async () => {
    const warned = (await boot(true)).filter(([level]) => level === 'warn').map(([, message]) => message);
    expect(warned.some((message) => message.includes("@EventPattern('orders.legacy')"))).toBe(true);
    expect(warned.some((message) => message.includes("@MessagePattern('orders.rpc')"))).toBe(true);
    expect(warned.some((message) => message.includes('is consumed through 2 subscriptions'))).toBe(true);
    expect(warned.some((message) => message.includes('its class is a provider, not a controller'))).toBe(true);
    expect(warned.some((message) => message.includes("bound to connection 'nowhere'"))).toBe(true);
    const quiet = await boot(false);
    expect(quiet.filter(([level]) => level !== 'log')).toEqual([]);
    // The information lines stay: they say what runs.
    expect(quiet.filter(([, message]) => message.startsWith('consuming '))).toHaveLength(2);
  });

  it("the documented quiet logger drops the information lines and keeps a failure's lines", async () => {
    const { logger, lines } = capture();
    @Controller()
    class FailingController {
      @BabelHandler('urn:babel:orders:created', { maxAttempts: 1 })
      created(): void {
        throw new Error('no invoice today');
      }

      @EventPattern('orders.legacy')
      legacy(_data: unknown): void {}
    }
    const pulsar = new InMemoryPulsar();
    const moduleRef = await useInMemoryPulsar(
      Test.createTestingModule({ imports: [QuietLogsModule], controllers: [FailingController] }),
      pulsar,
    ).compile();
    moduleRef.useLogger(logger);
    const app = moduleRef.createNestMicroservice({ strategy: moduleRef.get(BabelPulsarServer), logger });
    await app.listen();
    // logOutcomes: the harness would otherwise keep the failure's line for the test.
    const harness = await BabelQueueTestHarness.attach(moduleRef.get(BabelPulsarServer), pulsar, {
      logOutcomes: true,
    });
    const fromBabel = () => lines.filter(([, message]) => /consuming |@EventPattern|message failed/.test(message));
    expect(fromBabel()).toEqual([]);
    const published = await harness.publish('urn:babel:orders:created', { order_id: 1 });
    expect((await published.outcome()).kind).toBe('dead-lettered');
    expect(fromBabel()).toEqual([['error', expect.stringContaining('message failed: urn="urn:babel:orders:created"')]]);
    await harness.close();
    await app.close();
  });
});
