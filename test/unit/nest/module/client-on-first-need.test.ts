// The module's Pulsar client connects nothing until it is needed: compile(), an HTTP app's init() and close()
// open no connection to the service URL, whichever client its scheme selects; listen() and the first publish do.
// The "broker" here is a TCP server that counts the connections it is offered and closes each one.
import 'reflect-metadata';
import net from 'node:net';
import { Controller, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  BABEL_PULSAR_CLIENT,
  BabelHandler,
  BabelPulsarClient,
  BabelPulsarServer,
  BabelQueueModule,
} from '../../../../lib/index.js';
import { LazyPulsarClient } from '../../../../lib/pulsar/index.js';

@Controller()
class OrdersController {
  @BabelHandler('urn:babel:orders:created')
  created(): void {}
}

/** Counts the TCP connections made to it. */
async function connectionCounter(): Promise<{ port: number; count(): number; close(): Promise<void> }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    count: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const quiet = { log() {}, warn() {}, error() {}, debug() {}, verbose() {} };

function appModule(serviceUrl: string) {
  @Module({
    imports: [
      BabelQueueModule.forRoot({
        serviceUrl,
        topic: 'orders',
        logger: quiet,
        publishTimeoutMs: 500,
        startupWarnings: false,
        clientOptions: serviceUrl.startsWith('http') ? { operationTimeoutMs: 500 } : { operationTimeoutSeconds: 1 },
      }),
    ],
    controllers: [OrdersController],
  })
  class AppModule {}
  return AppModule;
}

describe.each([
  ['WebSocket', 'http'],
  ['native', 'pulsar'],
])('the module on the %s client', (_name, scheme) => {
  it('compiles, initialises and closes without a connection; the client is created at listen()', async () => {
    const broker = await connectionCounter();
    try {
      const serviceUrl = `${scheme}://127.0.0.1:${broker.port}`;
      const moduleRef = await Test.createTestingModule({ imports: [appModule(serviceUrl)] }).compile();
      const lazy = moduleRef.get<LazyPulsarClient>(BABEL_PULSAR_CLIENT);
      const http = moduleRef.createNestApplication({ logger: false });
      await http.init();
      await http.close();
      expect(broker.count()).toBe(0);
      expect(lazy.current).toBeUndefined();

      const again = await Test.createTestingModule({ imports: [appModule(serviceUrl)] }).compile();
      const app = again.createNestMicroservice({ strategy: again.get(BabelPulsarServer), logger: false });
      await expect(app.listen()).rejects.toThrow(/BabelPulsarServer could not start/);
      expect(again.get<LazyPulsarClient>(BABEL_PULSAR_CLIENT).current).toBeDefined();
      expect(broker.count()).toBeGreaterThan(0);
      await app.close();
    } finally {
      await broker.close();
    }
  });
});

it('the first publish creates the client and connects', async () => {
  const broker = await connectionCounter();
  try {
    const moduleRef = await Test.createTestingModule({
      imports: [appModule(`http://127.0.0.1:${broker.port}`)],
    }).compile();
    await moduleRef.init();
    expect(broker.count()).toBe(0);
    await expect(moduleRef.get(BabelPulsarClient).publish('urn:babel:orders:created', {})).rejects.toThrow();
    expect(moduleRef.get<LazyPulsarClient>(BABEL_PULSAR_CLIENT).current).toBeDefined();
    expect(broker.count()).toBeGreaterThan(0);
    await moduleRef.close();
  } finally {
    await broker.close();
  }
});
