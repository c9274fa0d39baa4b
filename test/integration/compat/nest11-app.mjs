// A NestJS 11 microservice (plain JS, decorators applied by hand) consuming one message through the
// built package; run by nest11.test.ts from a folder whose node_modules holds Nest 11.
import 'reflect-metadata';
import { Controller, Module, UseInterceptors } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, Payload } from '@nestjs/microservices';
import {
  BabelHandler,
  BabelNonRetriableError,
  BabelPulsarClient,
  BabelPulsarServer,
  BabelQueueModule,
  EnvelopeCodec,
  PulsarWebSocketClient,
} from '@babelqueue/nestjs-pulsar';
import { pulsarProperties } from '@babelqueue/nestjs-pulsar/pulsar';

const [webUrl, topic, moduleTopic] = process.argv.slice(2);
const seen = [];

class Orders {
  created(data, ctx) {
    seen.push({ data, attempts: ctx.getAttempts(), urn: ctx.getUrn() });
    if (ctx.getAttempts() === 0) throw new Error('first delivery fails');
  }
}
const descriptor = Object.getOwnPropertyDescriptor(Orders.prototype, 'created');
Payload()(Orders.prototype, 'created', 0);
Ctx()(Orders.prototype, 'created', 1);
BabelHandler('urn:babel:orders:created')(Orders.prototype, 'created', descriptor);
Controller()(Orders);

// The app as users build it: the module from a service URL, its server as the strategy.
class AppModule {}
Module({ imports: [BabelQueueModule.forRoot({ serviceUrl: webUrl, topic })], controllers: [Orders] })(AppModule);
const app = await NestFactory.createMicroservice(AppModule, {
  inject: [BabelPulsarServer],
  useFactory: (strategy) => ({ strategy }),
  logger: ['error'],
});
await app.listen();

// The test's own publisher, beside the app.
const client = new PulsarWebSocketClient({ serviceUrl: webUrl });

const envelope = EnvelopeCodec.make('urn:babel:orders:created', { order_id: 11 }, { queue: topic });
const producer = await client.createProducer({ topic });
await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
await producer.close();

const deadline = Date.now() + 30_000;
while (seen.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
await app.close();
await client.close();
// The module path under Nest 11: forRoot, the server from DI, BabelPulsarClient publishing.
const viaModule = [];
class Audit {
  logged(data, ctx) {
    viaModule.push({ data, traceId: ctx.getTraceId(), queue: ctx.getEnvelope().meta.queue });
  }
}
const auditDescriptor = Object.getOwnPropertyDescriptor(Audit.prototype, 'logged');
Payload()(Audit.prototype, 'logged', 0);
Ctx()(Audit.prototype, 'logged', 1);
BabelHandler('urn:babel:audit:logged')(Audit.prototype, 'logged', auditDescriptor);
Controller()(Audit);
class ModuleApp {}
Module({ imports: [BabelQueueModule.forRoot({ serviceUrl: webUrl, topic: moduleTopic })], controllers: [Audit] })(
  ModuleApp,
);
const moduleApp = await NestFactory.createMicroservice(ModuleApp, {
  inject: [BabelPulsarServer],
  useFactory: (strategy) => ({ strategy }),
  logger: ['error'],
});
await moduleApp.listen();
await moduleApp.get(BabelPulsarClient).publish('urn:babel:audit:logged', { entry: 'nest 11' }, { traceId: 'trace-11' });
const moduleDeadline = Date.now() + 30_000;
while (viaModule.length < 1 && Date.now() < moduleDeadline) await new Promise((r) => setTimeout(r, 50));
await moduleApp.close();

// Failures under Nest 11: an interceptor of the controller class throws; the failure relay hands the true cause to
// the transport (dead-lettered at once), and Nest's own exception handler logs nothing.
const nestLines = [];
const recording = {
  log() {},
  warn() {},
  debug() {},
  verbose() {},
  error(message, ...rest) {
    nestLines.push({ message: String(message?.message ?? message), context: rest.at(-1) });
  },
};
class RefuseInterceptor {
  intercept() {
    throw new BabelNonRetriableError('refused by the class interceptor');
  }
}
class Guarded {
  handle() {}
}
Controller()(Guarded);
UseInterceptors(new RefuseInterceptor())(Guarded);
BabelHandler('urn:babel:orders:refused')(
  Guarded.prototype,
  'handle',
  Object.getOwnPropertyDescriptor(Guarded.prototype, 'handle'),
);
const failureTopic = `${topic}-failures`;
class FailureApp {}
Module({
  imports: [BabelQueueModule.forRoot({ serviceUrl: webUrl, topic: failureTopic, consumer: { maxAttempts: 3 } })],
  controllers: [Guarded],
})(FailureApp);
const failureApp = await NestFactory.createMicroservice(FailureApp, {
  inject: [BabelPulsarServer],
  useFactory: (strategy) => ({ strategy }),
  logger: recording,
});
await failureApp.listen();
const failureClient = new PulsarWebSocketClient({ serviceUrl: webUrl });
const dlq = await failureClient.subscribe({
  topic: `${failureTopic}.dlq`,
  subscription: 'check',
  subscriptionType: 'Shared',
});
const refused = EnvelopeCodec.make('urn:babel:orders:refused', { order_id: 12 }, { queue: failureTopic });
const failureProducer = await failureClient.createProducer({ topic: failureTopic });
await failureProducer.send({ data: EnvelopeCodec.encodeToBuffer(refused), properties: pulsarProperties(refused) });
await failureProducer.close();
const record = JSON.parse((await dlq.receive(30_000)).getData().toString('utf8')).dead_letter;
await dlq.close();
await failureApp.close();
await failureClient.close();
const failure = {
  record: { attempts: record.attempts, exception: record.exception, error: record.error },
  exceptionHandlerLines: nestLines.filter((line) => /ExceptionsHandler/.test(String(line.context))),
  transportLines: nestLines.filter((line) => line.context === 'BabelPulsarServer').length,
};

const { version } = JSON.parse(
  (await import('node:fs')).readFileSync(new URL(import.meta.resolve('@nestjs/core/package.json')), 'utf8'),
);
console.log(JSON.stringify({ nest: version, seen, viaModule, failure }));
