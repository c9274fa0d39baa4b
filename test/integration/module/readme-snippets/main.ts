// README snippet: the entry point. (The README imports from '@babelqueue/nestjs-pulsar'.)
import { Logger } from '@nestjs/common';
import { bootstrapHybrid } from './bootstrap.js';

// HTTP and the consumer in one process; bootstrapMicroservice() for the consumer alone. A start that fails (no
// broker at the URL, a wrong port) is one error line and exit code 1, as Nest ends a failed bootstrap.
bootstrapHybrid().catch((error: unknown) => {
  new Logger('Bootstrap').error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
