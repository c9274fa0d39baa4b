// README snippet: the entry point. (The README imports from '@babelqueue/nestjs-pulsar'.)
import { bootstrapHybrid } from './bootstrap.js';

// HTTP and the consumer in one process; bootstrapMicroservice() for the consumer alone.
void bootstrapHybrid();
