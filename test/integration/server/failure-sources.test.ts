// Where a failure comes from × what is thrown → the dead-letter record, the number of attempts and the log lines,
// through the real broker. Every layer Nest runs (handler, pipes, guards, interceptors: method, class, global) and
// the user's exception filters (rethrow, map, swallow) are covered.
import { jest } from '@jest/globals';
import {
  BadRequestException,
  Catch,
  Controller,
  Injectable,
  Module,
  UseFilters,
  UseGuards,
  UseInterceptors,
  UsePipes,
  type ArgumentsHost,
  type CallHandler,
  type CanActivate,
  type ExceptionFilter,
  type ExecutionContext,
  type INestMicroservice,
  type LoggerService,
  type NestInterceptor,
  type PipeTransform,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Payload, RpcException } from '@nestjs/microservices';
import { mergeMap, of, throwError, type Observable } from 'rxjs';
import {
  BabelHandler,
  BabelNonRetriableError,
  BabelPulsarServer,
  BabelQueueModule,
  EnvelopeCodec,
  type PulsarClientLike,
  type SettledEvent,
} from '../../../lib/index.js';
import { pulsarProperties, type PulsarConsumer } from '../../../lib/pulsar/index.js';
import { newClient, receiveN, serviceUrl, uniqueTopic, waitFor } from '../../support/broker.js';

jest.setTimeout(120_000);

type Kind = 'retriable' | 'non-retriable' | 'http-4xx' | 'rpc' | 'non-error';
const KINDS: Kind[] = ['retriable', 'non-retriable', 'http-4xx', 'rpc', 'non-error'];

/** What each kind of throw becomes in the dead-letter record, and after how many deliveries (maxAttempts 3). */
const EXPECTED: Record<Kind, { attempts: number; exception: string | null; error: string }> = {
  retriable: { attempts: 3, exception: 'Error', error: 'retriable boom' },
  'non-retriable': { attempts: 1, exception: 'BabelNonRetriableError', error: 'not worth a retry' },
  'http-4xx': { attempts: 1, exception: 'BadRequestException', error: 'bad input' },
  rpc: { attempts: 3, exception: 'RpcException', error: 'rpc said no' },
  'non-error': { attempts: 3, exception: null, error: 'plain text thrown' },
};

function failure(kind: Kind): unknown {
  switch (kind) {
    case 'retriable':
      return new Error('retriable boom');
    case 'non-retriable':
      return new BabelNonRetriableError('not worth a retry');
    case 'http-4xx':
      return new BadRequestException('bad input');
    case 'rpc':
      return new RpcException('rpc said no');
    case 'non-error':
      return 'plain text thrown';
  }
}

const kindOf = (context: ExecutionContext): Kind => context.switchToRpc().getData<{ kind: Kind }>().kind;
const fail = (kind: Kind): never => {
  throw failure(kind);
};

@Injectable()
class ThrowingPipe implements PipeTransform {
  transform(value: { kind: Kind }) {
    return fail(value.kind);
  }
}

@Injectable()
class ThrowingGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return fail(kindOf(context));
  }
}

@Injectable()
class DenyingGuard implements CanActivate {
  canActivate(): boolean {
    return false;
  }
}

/** Fails after the handler ran: the error travels through the Observable the interceptors return. */
@Injectable()
class FailingAfterInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(mergeMap(() => throwError(() => failure(kindOf(context)))));
  }
}

/** Fails before the handler runs, synchronously. */
@Injectable()
class FailingBeforeInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext): Observable<unknown> {
    return fail(kindOf(context));
  }
}

@Catch()
class RethrowFilter implements ExceptionFilter {
  catch(exception: unknown): never {
    throw exception;
  }
}

@Catch()
class MapToNonRetriableFilter implements ExceptionFilter {
  catch(exception: unknown): Observable<never> {
    const text = exception instanceof Error ? exception.message : String(exception);
    return throwError(() => new BabelNonRetriableError(`mapped: ${text}`));
  }
}

@Catch()
class SwallowFilter implements ExceptionFilter {
  catch(_exception: unknown, _host: ArgumentsHost): Observable<null> {
    return of(null);
  }
}

const urn = (source: string) => `urn:babel:matrix:${source}`;
const handlerThrows = (data: { kind: Kind }) => fail(data.kind);

@Controller()
class MethodLevel {
  @BabelHandler(urn('handler'))
  handler(@Payload() data: { kind: Kind }) {
    handlerThrows(data);
  }

  @BabelHandler(urn('param-pipe'))
  paramPipe(@Payload(ThrowingPipe) _data: unknown) {}

  @BabelHandler(urn('method-pipe'))
  @UsePipes(ThrowingPipe)
  methodPipe(@Payload() _data: unknown) {}

  @BabelHandler(urn('guard-denies'))
  @UseGuards(DenyingGuard)
  guardDenies() {}

  @BabelHandler(urn('guard-throws'))
  @UseGuards(ThrowingGuard)
  guardThrows() {}

  @UseInterceptors(FailingAfterInterceptor)
  @BabelHandler(urn('interceptor-above'))
  interceptorAbove() {}

  @BabelHandler(urn('interceptor-below'))
  @UseInterceptors(FailingAfterInterceptor)
  interceptorBelow() {}

  @BabelHandler(urn('filter-rethrows'))
  @UseFilters(RethrowFilter)
  filterRethrows(@Payload() data: { kind: Kind }) {
    handlerThrows(data);
  }

  @BabelHandler(urn('filter-maps'))
  @UseFilters(new MapToNonRetriableFilter())
  filterMaps(@Payload() data: { kind: Kind }) {
    handlerThrows(data);
  }

  @UseFilters(SwallowFilter)
  @BabelHandler(urn('filter-swallows'))
  filterSwallows(@Payload() data: { kind: Kind }) {
    handlerThrows(data);
  }
}

@Controller()
@UsePipes(ThrowingPipe)
class ClassPipe {
  @BabelHandler(urn('class-pipe'))
  classPipe(@Payload() _data: unknown) {}
}

@Controller()
@UseGuards(ThrowingGuard)
class ClassGuard {
  @BabelHandler(urn('class-guard'))
  classGuard() {}
}

@Controller()
@UseInterceptors(FailingBeforeInterceptor)
class ClassInterceptor {
  @BabelHandler(urn('class-interceptor'))
  classInterceptor() {}
}

@Controller()
@UseFilters(MapToNonRetriableFilter)
class ClassFilter {
  @BabelHandler(urn('class-filter-maps'))
  classFilterMaps(@Payload() data: { kind: Kind }) {
    handlerThrows(data);
  }
}

@Controller()
class Plain {
  @BabelHandler(urn('global'))
  plain(@Payload() data: { kind: Kind }) {
    handlerThrows(data);
  }
}

@Controller()
class Quiet {
  @BabelHandler(urn('global'))
  quiet(@Payload() _data: unknown) {}
}

/** Lines Nest itself logs (its exception handlers among them), by context. */
class RecordingNestLogger implements LoggerService {
  readonly lines: Array<{ level: string; context: string | undefined; message: string }> = [];
  private record(level: string, message: unknown, rest: unknown[]) {
    const context = rest.length > 0 && typeof rest[rest.length - 1] === 'string' ? String(rest.at(-1)) : undefined;
    this.lines.push({ level, context, message: message instanceof Error ? message.message : String(message) });
  }
  log(message: unknown, ...rest: unknown[]) {
    this.record('log', message, rest);
  }
  error(message: unknown, ...rest: unknown[]) {
    this.record('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]) {
    this.record('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]) {
    this.record('debug', message, rest);
  }
}

interface Scenario {
  name: string;
  controllers: Type[];
  providers?: Type[];
  /** Runs on the app before it listens (global enhancers). */
  configure?: (app: INestMicroservice) => void;
  /** Starts the server inside a hybrid HTTP application with inheritAppConfig, the globals set on the app. */
  hybrid?: (app: { useGlobalInterceptors(...i: NestInterceptor[]): unknown }) => void;
  /** Source → the kinds it is sent; each message's data is { kind }. */
  sends: Record<string, Kind[]>;
}

interface RunResult {
  records: Array<{ urn: string; kind: Kind; attempts: number; exception: string | null; error: string }>;
  settled: SettledEvent[];
  failureLines: string[];
  debugLines: string[];
  nestLines: RecordingNestLogger['lines'];
}

let client: PulsarClientLike;
beforeAll(() => {
  client = newClient();
});
afterAll(async () => {
  await client.close();
});

async function run(scenario: Scenario): Promise<RunResult> {
  const topic = uniqueTopic(`matrix-${scenario.name}`);
  const failureLines: string[] = [];
  const debugLines: string[] = [];
  const consumerLogger = {
    log: () => {},
    warn: (line: string) => failureLines.push(line),
    error: (line: string) => failureLines.push(line),
    debug: (line: string) => debugLines.push(line),
  };
  const settled: SettledEvent[] = [];
  const nestLogger = new RecordingNestLogger();
  // The app as users build it: the module from a service URL, its server as the strategy.
  @Module({
    imports: [
      BabelQueueModule.forRoot({
        serviceUrl: serviceUrl(),
        topic,
        consumer: { maxAttempts: 3 },
        logger: consumerLogger,
      }),
    ],
    controllers: scenario.controllers,
    providers: scenario.providers ?? [],
  })
  class MatrixModule {}
  let close: () => Promise<unknown>;
  if (scenario.hybrid) {
    const app = await NestFactory.create(MatrixModule, { logger: nestLogger });
    // Before connectMicroservice: the microservice builds its handlers' pipelines when it is connected.
    scenario.hybrid(app);
    const server = app.get(BabelPulsarServer);
    server.on('settled', (event) => settled.push(event));
    app.connectMicroservice({ strategy: server }, { inheritAppConfig: true });
    await app.startAllMicroservices();
    close = () => app.close();
  } else {
    const app = await NestFactory.createMicroservice(MatrixModule, {
      inject: [BabelPulsarServer],
      useFactory: (strategy: BabelPulsarServer) => ({ strategy }),
      logger: nestLogger,
      abortOnError: false,
    });
    app.get(BabelPulsarServer).on('settled', (event) => settled.push(event));
    scenario.configure?.(app);
    await app.listen();
    close = () => app.close();
  }
  const dlq: PulsarConsumer = await client.subscribe({
    topic: `${topic}.dlq`,
    subscription: 'matrix',
    subscriptionType: 'Shared',
  });
  try {
    const producer = await client.createProducer({ topic });
    let sent = 0;
    for (const [source, kinds] of Object.entries(scenario.sends)) {
      for (const kind of kinds) {
        const envelope = EnvelopeCodec.make(urn(source), { kind }, { queue: topic });
        await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
        sent += 1;
      }
    }
    await producer.close();
    const swallowed = scenario.sends['filter-swallows']?.length ?? 0;
    const records = (await receiveN(dlq, sent - swallowed, 60_000)).map((message) => {
      const body = JSON.parse(message.getData().toString('utf8'));
      return {
        urn: body.job as string,
        kind: body.data.kind as Kind,
        attempts: body.dead_letter.attempts as number,
        exception: body.dead_letter.exception as string | null,
        error: body.dead_letter.error as string,
      };
    });
    await waitFor('every delivery settled', () => settled.filter((e) => e.action === 'ack').length >= swallowed);
    return { records, settled, failureLines, debugLines, nestLines: nestLogger.lines };
  } finally {
    await dlq.close();
    await close();
  }
}

const recordOf = (result: RunResult, source: string, kind: Kind) =>
  result.records.find((record) => record.urn === urn(source) && record.kind === kind);

/** Each source's records match the kind's expectation, and each failed delivery was logged once. */
function expectKinds(result: RunResult, source: string, kinds: Kind[] = KINDS) {
  for (const kind of kinds) {
    expect({ source, kind, ...recordOf(result, source, kind) }).toEqual({
      source,
      kind,
      urn: urn(source),
      ...EXPECTED[kind],
    });
  }
  const failedDeliveries = kinds.reduce((sum, kind) => sum + EXPECTED[kind].attempts, 0);
  const lines = result.failureLines.filter((line) => line.startsWith('message failed:') && line.includes(urn(source)));
  expect({ source, lines: lines.length }).toEqual({ source, lines: failedDeliveries });
}

/** Nest's exception handlers logged nothing: the transport's line is the only one per failed delivery. */
function expectNoNestFailureLines(result: RunResult) {
  expect(result.nestLines.filter((line) => /ExceptionsHandler/.test(line.context ?? ''))).toEqual([]);
}

describe('a failure from any layer is settled by its true cause and logged once (real broker)', () => {
  it('method and class layers: handler, pipes, guards, interceptors above and below @BabelHandler, filters', async () => {
    const result = await run({
      name: 'layers',
      controllers: [MethodLevel, ClassPipe, ClassGuard, ClassInterceptor, ClassFilter],
      sends: {
        handler: KINDS,
        'param-pipe': KINDS,
        'method-pipe': KINDS,
        'guard-denies': ['retriable'],
        'guard-throws': KINDS,
        'interceptor-above': KINDS,
        'interceptor-below': KINDS,
        'filter-rethrows': KINDS,
        'filter-maps': ['retriable', 'rpc'],
        'filter-swallows': ['retriable', 'non-error'],
        'class-pipe': KINDS,
        'class-guard': KINDS,
        'class-interceptor': KINDS,
        'class-filter-maps': ['retriable', 'non-error'],
      },
    });
    for (const source of [
      'handler',
      'param-pipe',
      'method-pipe',
      'guard-throws',
      'interceptor-above',
      'interceptor-below',
      'filter-rethrows',
      'class-pipe',
      'class-guard',
      'class-interceptor',
    ]) {
      expectKinds(result, source);
    }
    // A guard that returns false: Nest's denial, not worth a retry.
    expect(recordOf(result, 'guard-denies', 'retriable')).toEqual({
      urn: urn('guard-denies'),
      kind: 'retriable',
      attempts: 1,
      exception: 'RpcException',
      error: 'Forbidden resource',
    });
    // A user filter that maps the failure decides the outcome: here, not worth a retry.
    expect(recordOf(result, 'filter-maps', 'retriable')).toMatchObject({
      attempts: 1,
      exception: 'BabelNonRetriableError',
      error: 'mapped: retriable boom',
    });
    expect(recordOf(result, 'filter-maps', 'rpc')).toMatchObject({ attempts: 1, error: 'mapped: rpc said no' });
    expect(recordOf(result, 'class-filter-maps', 'non-error')).toMatchObject({
      attempts: 1,
      exception: 'BabelNonRetriableError',
      error: 'mapped: plain text thrown',
    });
    // A user filter that swallows the failure turns it into a success: acknowledged, no record.
    expect(result.records.filter((record) => record.urn === urn('filter-swallows'))).toEqual([]);
    expectNoNestFailureLines(result);
    // The one failure line is all: no debug line repeats it with its stack (logStackTraces puts the stack on it).
    expect(result.debugLines.some((line) => line.includes('retriable boom'))).toBe(false);
  });

  it.each([
    ['pipe', (app: INestMicroservice) => app.useGlobalPipes(new ThrowingPipe())],
    ['guard', (app: INestMicroservice) => app.useGlobalGuards(new ThrowingGuard())],
    ['interceptor', (app: INestMicroservice) => app.useGlobalInterceptors(new FailingAfterInterceptor())],
  ])('a global %s (useGlobal… on the microservice)', async (_layer, configure) => {
    const result = await run({ name: `global-${_layer}`, controllers: [Quiet], configure, sends: { global: KINDS } });
    expectKinds(result, 'global');
    expectNoNestFailureLines(result);
  });

  it('a global interceptor of a hybrid application with inheritAppConfig', async () => {
    const result = await run({
      name: 'hybrid',
      controllers: [Quiet],
      hybrid: (app) => app.useGlobalInterceptors(new FailingBeforeInterceptor()),
      sends: { global: KINDS },
    });
    expectKinds(result, 'global');
    expectNoNestFailureLines(result);
  });

  it('a global exception filter maps, and a method filter wins over it', async () => {
    const result = await run({
      name: 'global-filter',
      controllers: [Plain, MethodLevel],
      configure: (app) => app.useGlobalFilters(new MapToNonRetriableFilter()),
      sends: { global: ['retriable', 'non-error'], 'filter-rethrows': ['rpc'], 'filter-swallows': ['retriable'] },
    });
    expect(recordOf(result, 'global', 'retriable')).toMatchObject({ attempts: 1, error: 'mapped: retriable boom' });
    expect(recordOf(result, 'global', 'non-error')).toMatchObject({ attempts: 1, error: 'mapped: plain text thrown' });
    // The method's own filter is consulted first: it rethrows the RpcException, which is retried.
    expectKinds(result, 'filter-rethrows', ['rpc']);
    expect(result.records.filter((record) => record.urn === urn('filter-swallows'))).toEqual([]);
    expectNoNestFailureLines(result);
  });
});
