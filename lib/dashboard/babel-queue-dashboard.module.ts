import {
  Body,
  Controller,
  Get,
  Header,
  Inject,
  Module,
  Post,
  Query,
  UseGuards,
  type CanActivate,
  type DynamicModule,
  type Type,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { BabelQueueError } from '../envelope/index.js';
import { BABEL_PULSAR_CLIENT } from '../nest/constants.js';
import type { PulsarClientLike } from '../pulsar/client-types.js';
import { checkDashboardOptions, type BabelQueueDashboardOptions } from './dashboard-options.js';
import { dashboardPage } from './dashboard-page.js';
import { DashboardService, type DashboardQuery } from './dashboard.service.js';

const DASHBOARD_SERVICE = Symbol('BabelQueueDashboardService');

/** A guard that lets everyone in: used only when the options say the app is private. */
class OpenToOperators implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}

function dashboardController(path: string, guard: Type<CanActivate> | CanActivate): Type {
  const apiBase = `/${path}/api`.replace(/\/+/g, '/');

  @Controller(path)
  @UseGuards(guard)
  class BabelQueueDashboardController {
    constructor(@Inject(DASHBOARD_SERVICE) private readonly service: DashboardService) {}

    @Get()
    @Header('content-type', 'text/html; charset=utf-8')
    @Header('cache-control', 'no-store')
    page(): string {
      return dashboardPage(apiBase);
    }

    @Get('api/topics')
    topics() {
      return this.service.summaries();
    }

    @Get('api/records')
    records(@Query() query: DashboardQuery) {
      return this.service.records(query);
    }

    @Post('api/redrive')
    redrive(@Body() body: DashboardQuery) {
      return this.service.redrive(body ?? {});
    }

    @Post('api/purge')
    purge(@Body() body: DashboardQuery) {
      return this.service.purge(body ?? {});
    }
  }
  return BabelQueueDashboardController;
}

/**
 * A small web page in the app for its dead-letter topics: counts, records with filters, a record's body and
 * error, and redrive or purge of a selection (dry run first), with the CLI's semantics (docs/dead-letters.md).
 * Opt-in, and it refuses to start without a guard unless told the app is private.
 */
@Module({})
export class BabelQueueDashboardModule {
  static forRoot(options: BabelQueueDashboardOptions): DynamicModule {
    checkDashboardOptions(options);
    const path = (options.path ?? 'babelqueue').replace(/^\/+|\/+$/g, '');
    const guard = options.guard ?? new OpenToOperators();
    return {
      module: BabelQueueDashboardModule,
      // The guard class is built in this module: `imports` brings what it injects (an auth module, say).
      imports: [...(options.imports ?? [])],
      controllers: [dashboardController(path, guard)],
      providers: [
        {
          provide: DASHBOARD_SERVICE,
          inject: [ModuleRef],
          useFactory: (moduleRef: ModuleRef) => new DashboardService(options, () => clientOf(options, moduleRef)),
        },
      ],
    };
  }
}

function clientOf(options: BabelQueueDashboardOptions, moduleRef: ModuleRef): PulsarClientLike {
  if (options.client) return options.client;
  try {
    return moduleRef.get<PulsarClientLike>(BABEL_PULSAR_CLIENT, { strict: false });
  } catch (error) {
    throw new BabelQueueError(
      'BabelQueueDashboardModule found no Pulsar client: import BabelQueueModule in the app or pass { client }',
      { cause: error },
    );
  }
}
