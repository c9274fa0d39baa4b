// The README's quick start where pulsar-client is not installed, with its default pulsar:// URL: what a user of
// the WebSocket-only install line meets. Prints one JSON line per step (compile, listen, publish).
import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { BABEL_PULSAR_CLIENT, BabelPulsarClient, BabelPulsarServer } from '../../../../../lib/index.js';
import { AppModule } from '../../../../integration/module/readme-snippets/app.module.js';
import { LazyPulsarClient } from '../../../../../lib/pulsar/index.js';

const report = (step: string, outcome: unknown) => console.log(JSON.stringify({ step, outcome }));
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

// The README's test: the publisher replaced, an HTTP app initialised, nothing listens or publishes.
const overridden = await Test.createTestingModule({ imports: [AppModule] })
  .overrideProvider(BabelPulsarClient)
  .useValue({ publish: async () => 'id' })
  .compile();
const http = overridden.createNestApplication({ logger: false });
await http.init();
await http.close();
report('compile', 'ok');

// An app that never listens nor publishes: it starts and closes, and its Pulsar client is never created.
const idle = await Test.createTestingModule({ imports: [AppModule] }).compile();
const idleApp = idle.createNestApplication({ logger: false });
await idleApp.init();
await idleApp.close();
report('idle', idle.get<LazyPulsarClient>(BABEL_PULSAR_CLIENT).current === undefined ? 'never created' : 'created');

const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
const app = moduleRef.createNestMicroservice({ strategy: moduleRef.get(BabelPulsarServer), logger: false });
try {
  await app.listen();
  report('listen', 'ok');
} catch (error) {
  report('listen', messageOf(error));
}
try {
  await app.get(BabelPulsarClient).publish('urn:babel:orders:cancelled', { order_id: 1 });
  report('publish', 'ok');
} catch (error) {
  report('publish', messageOf(error));
}
await app.close();
