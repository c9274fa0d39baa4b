// A NestJS 11 microservice (plain JS, decorators applied by hand) consuming one message through the
// built package; run by nest11.test.ts from a folder whose node_modules holds Nest 11.
import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, Payload } from '@nestjs/microservices';
import {
  BabelHandler,
  BabelPulsarServer,
  EnvelopeCodec,
  PulsarWebSocketClient,
  pulsarProperties,
} from '@babelqueue/nestjs-pulsar';

const [webUrl, topic] = process.argv.slice(2);
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

class AppModule {}
Module({ controllers: [Orders] })(AppModule);

const client = new PulsarWebSocketClient({ serviceUrl: webUrl });
const server = new BabelPulsarServer({ client, topics: topic });
const app = await NestFactory.createMicroservice(AppModule, { strategy: server, logger: ['error'] });
await app.listen();

const envelope = EnvelopeCodec.make('urn:babel:orders:created', { order_id: 11 }, { queue: topic });
const producer = await client.createProducer({ topic });
await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
await producer.close();

const deadline = Date.now() + 30_000;
while (seen.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
await app.close();
await client.close();
const { version } = JSON.parse(
  (await import('node:fs')).readFileSync(new URL(import.meta.resolve('@nestjs/core/package.json')), 'utf8'),
);
console.log(JSON.stringify({ nest: version, seen }));
