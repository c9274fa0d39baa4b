// README snippet: quieter start-up logs. (The README imports from '@babelqueue/nestjs-pulsar'.)
import { Logger, Module } from '@nestjs/common';
import { BabelQueueModule } from '../../../../lib/index.js';

const babelLogger = new Logger('BabelPulsarServer');

@Module({
  imports: [
    BabelQueueModule.forRoot({
      serviceUrl: process.env.PULSAR_URL ?? 'pulsar://localhost:6650',
      topic: process.env.ORDERS_TOPIC ?? 'orders',
      startupWarnings: false, // no warnings about the wiring
      // The consumers' information lines (one per subscription at start, a connection coming back) are dropped;
      // their warnings, errors and debug lines (a failed message, a lost connection) still reach Nest's logger.
      logger: {
        log: () => undefined,
        warn: (message) => babelLogger.warn(message),
        error: (message, stack) => babelLogger.error(message, stack),
        debug: (message) => babelLogger.debug(message),
      },
    }),
  ],
})
export class QuietLogsModule {}
