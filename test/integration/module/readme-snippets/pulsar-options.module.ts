// README snippet: Pulsar client options. (The README imports from '@babelqueue/nestjs-pulsar'.)
import { Controller, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AsyncMicroserviceOptions } from '@nestjs/microservices';
import { Payload } from '@nestjs/microservices';
import {
  BabelHandler,
  BabelPulsarClient,
  BabelPulsarServer,
  BabelQueueModule,
  InjectBabelClient,
} from '../../../../lib/index.js';

const PULSAR_URL = process.env.PULSAR_URL ?? 'pulsar://localhost:6650';
const REPORTS = process.env.REPORTS_TOPIC ?? 'reports';
// Chunking is the native client's (a WebSocket frame has a size limit of its own): asked of the WebSocket
// client, it fails at start-up naming the setting.
const native = PULSAR_URL.startsWith('pulsar');

@Injectable()
export class ReportsService {
  constructor(@InjectBabelClient() private readonly client: BabelPulsarClient) {}

  /** A report may be larger than the broker's maxMessageSize (5 MB by default): chunked on the native client. */
  publish(id: number, body: string): Promise<string> {
    return this.client.publish('urn:babel:reports:ready', { id, body });
  }
}

@Controller()
export class ReportsController {
  readonly received = new Map<number, number>();

  // Settings of the consumer this handler reads through: its name shows in the broker's topic stats.
  @BabelHandler('urn:babel:reports:ready', {
    consumerOptions: { consumerName: 'reports-worker', receiverQueueSize: 10 },
  })
  onReport(@Payload() report: { id: number; body: string }): void {
    this.received.set(report.id, report.body.length);
  }
}

@Module({
  imports: [
    BabelQueueModule.forRoot({
      serviceUrl: PULSAR_URL,
      topic: REPORTS,
      // Every producer of the module (publish, retry copies, dead letters) ...
      producerOptions: { compressionType: 'LZ4' },
      // ... and, merged over it, the producers of one topic.
      producerOptionsByTopic: native ? { [REPORTS]: { chunkingEnabled: true } } : {},
      // Every subscription's consumer (a handler's consumerOptions are merged over it).
      consumer: { consumerOptions: { ackTimeoutMs: 0 } },
    }),
  ],
  controllers: [ReportsController],
  providers: [ReportsService],
})
export class ReportsModule {}

export async function bootstrapReports() {
  const app = await NestFactory.createMicroservice<AsyncMicroserviceOptions>(ReportsModule, {
    inject: [BabelPulsarServer],
    useFactory: (server: BabelPulsarServer) => ({ strategy: server }),
  });
  await app.listen();
  return app;
}
