// Nest's request pipeline on @BabelHandler methods: guards, pipes, interceptors and exception filters.
import { jest } from '@jest/globals';
import {
  ArgumentsHost,
  BadRequestException,
  CallHandler,
  CanActivate,
  Catch,
  Controller,
  ExecutionContext,
  Injectable,
  NestInterceptor,
  PipeTransform,
  RpcExceptionFilter,
  UseFilters,
  UseGuards,
  UseInterceptors,
  UsePipes,
} from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { Observable, of, tap } from 'rxjs';
import { BabelContext, BabelHandler, EnvelopeCodec, type PulsarClientLike } from '../../../lib/index.js';
import { pulsarProperties } from '../../../lib/pulsar/index.js';
import { newClient, receiveN, uniqueTopic, waitFor } from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(60_000);

const log: string[] = [];

@Injectable()
class OnlyPaidGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const data = context.switchToRpc().getData<{ paid?: boolean }>();
    log.push(`guard:${String(data.paid)}`);
    return data.paid === true;
  }
}

class AmountPipe implements PipeTransform {
  transform(value: { amount?: unknown }) {
    if (typeof value.amount !== 'number') throw new BadRequestException('amount must be a number');
    return { ...value, amount: Math.round(value.amount * 100) };
  }
}

@Injectable()
class TimingInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const ctx = context.switchToRpc().getContext<BabelContext>();
    log.push(`before:${ctx.getUrn()}`);
    return next.handle().pipe(tap(() => log.push(`after:${ctx.getUrn()}`)));
  }
}

class KnownDuplicate extends Error {}

@Catch(KnownDuplicate)
class IgnoreDuplicatesFilter implements RpcExceptionFilter<KnownDuplicate> {
  catch(exception: KnownDuplicate, host: ArgumentsHost): Observable<unknown> {
    log.push(`filter:${exception.message}:${host.switchToRpc().getContext<BabelContext>().getUrn()}`);
    // Swallowing the error turns the delivery into a success: the message is acknowledged.
    return of(null);
  }
}

@Controller()
@UseInterceptors(TimingInterceptor)
class Payments {
  @BabelHandler('urn:babel:payments:charge')
  @UseGuards(OnlyPaidGuard)
  @UsePipes(new AmountPipe())
  charge(@Payload() data: { amount: number }) {
    log.push(`charge:${data.amount}`);
  }

  @BabelHandler('urn:babel:payments:refund')
  @UseFilters(new IgnoreDuplicatesFilter())
  refund(@Payload() data: { id: string }) {
    throw new KnownDuplicate(`duplicate ${data.id}`);
  }
}

let client: PulsarClientLike;
let service: RunningService;
let topic: string;
beforeAll(async () => {
  client = newClient();
  topic = uniqueTopic('pipeline');
  service = await startService([Payments], { client, topics: topic, maxAttempts: 1 }, [
    OnlyPaidGuard,
    TimingInterceptor,
  ]);
});
afterAll(async () => {
  await service.close();
  await client.close();
});
beforeEach(() => {
  log.length = 0;
  service.settled.length = 0;
});

async function publish(urn: string, data: Record<string, unknown>) {
  const envelope = EnvelopeCodec.make(urn, data, { queue: topic });
  const producer = await client.createProducer({ topic });
  await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
  await producer.close();
}

async function deadLetterAfter(urn: string, data: Record<string, unknown>) {
  const dlq = await client.subscribe({
    topic: `${topic}.dlq`,
    subscription: `check-${Date.now()}`,
    subscriptionType: 'Shared',
  });
  await publish(urn, data);
  const [record] = await receiveN(dlq, 1);
  await dlq.close();
  return JSON.parse(record!.getData().toString());
}

describe('Nest pipeline on @BabelHandler (real broker)', () => {
  it('runs guard, interceptor and pipe around the handler', async () => {
    await publish('urn:babel:payments:charge', { amount: 12.34, paid: true });
    await waitFor('the ack', () => service.settled.length === 1);
    expect(service.settled[0]!.action).toBe('ack');
    expect(log).toEqual([
      'guard:true',
      'before:urn:babel:payments:charge',
      'charge:1234',
      'after:urn:babel:payments:charge',
    ]);
  });

  it('treats a guard denial as a failure, reported with Nest’s message', async () => {
    const record = await deadLetterAfter('urn:babel:payments:charge', { amount: 1, paid: false });
    expect(record.dead_letter).toMatchObject({ reason: 'failed', error: 'Forbidden resource' });
    expect(log).not.toContain('charge:100');
  });

  it('treats a pipe rejection as a failure, with the pipe’s error', async () => {
    const record = await deadLetterAfter('urn:babel:payments:charge', { amount: 'lots', paid: true });
    expect(record.dead_letter).toMatchObject({
      reason: 'failed',
      error: 'amount must be a number',
      exception: 'BadRequestException',
    });
  });

  it('lets an exception filter turn a failure into a success', async () => {
    await publish('urn:babel:payments:refund', { id: 'r1' });
    await waitFor('the ack', () => service.settled.length === 1);
    expect(service.settled[0]!.action).toBe('ack');
    expect(log).toContain('filter:duplicate r1:urn:babel:payments:refund');
  });
});
