import { Module } from '@nestjs/common';
import { BabelQueueConfigurableModule } from './module-definition.js';

/**
 * Wires BabelQueue over Pulsar into a Nest application:
 *
 *     BabelQueueModule.forRoot({ serviceUrl: 'pulsar://localhost:6650', topic: 'orders' })
 *     BabelQueueModule.forRootAsync({ imports: [ConfigModule], inject: [ConfigService], useFactory: (c) => ({ … }) })
 *
 * Provides and exports the Pulsar client (BABEL_PULSAR_CLIENT), BabelPulsarClient (publishing), BabelPulsarServer
 * (the transport strategy to connect), BabelProducerPool (the server's retry and dead-letter producers) and
 * BabelQueueHealthIndicator. On shutdown the server drains first, then producers and the client close.
 */
@Module({})
export class BabelQueueModule extends BabelQueueConfigurableModule {}
