import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { bootstrapMicroservice } from '../test/integration/module/readme-snippets/bootstrap.js';
bootstrapMicroservice().catch((error: unknown) => {
  new Logger('Bootstrap').error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
