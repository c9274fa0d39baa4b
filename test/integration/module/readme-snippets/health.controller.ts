// README snippet: a terminus health endpoint (docs/operations.md). Compiled from the Markdown by test/unit/readme.test.ts.
import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from './terminus.js';
import { BabelQueueHealthIndicator } from '../../../../lib/index.js';

// In a module with imports: [TerminusModule, BabelQueueModule.forRoot(...)] and controllers: [HealthController].
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly babel: BabelQueueHealthIndicator,
  ) {}

  /** 200 while the client, producers and consumers are connected; 503 with the problems otherwise. */
  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.babel.isHealthy('babelqueue')]);
  }
}
