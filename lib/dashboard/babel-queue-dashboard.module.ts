import {
  Body,
  Controller,
  Get,
  Header,
  Headers,
  Inject,
  Module,
  NotFoundException,
  Post,
  Query,
  UnsupportedMediaTypeException,
  UseGuards,
  type CanActivate,
  type DynamicModule,
  type MiddlewareConsumer,
  type NestModule,
  type Type,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { BabelQueueError } from '../envelope/index.js';
import { BABEL_PULSAR_CLIENT } from '../nest/constants.js';
import { BabelPulsarServer } from '../nest/server/babel-pulsar.server.js';
import type { PulsarClientLike } from '../pulsar/client-types.js';
import { checkDashboardOptions, type BabelQueueDashboardOptions } from './dashboard-options.js';
import { dashboardPage } from './dashboard-page.js';
import { DashboardSchedules } from './dashboard-schedules.js';
import { requireJson, securityHeaders } from './security-headers.js';
import { DashboardService, type DashboardQuery } from './dashboard.service.js';
import {
  adminConnectionOf,
  SubscriptionsView,
  type SubscriptionControl,
  type SubscriptionTargetBody,
  type UnblockBody,
} from './dashboard-subscriptions.js';

const DASHBOARD_SERVICE = Symbol('BabelQueueDashboardService');
const SUBSCRIPTIONS_VIEW = Symbol('BabelQueueDashboardSubscriptions');
interface HeaderTarget {
  setHeader(name: string, value: string): unknown;
}

/** A guard that lets everyone in: used only when the options say the app is private. */
class OpenToOperators implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}

function dashboardController(
  path: string,
  guard: Type<CanActivate> | CanActivate,
  options: BabelQueueDashboardOptions,
): Type {
  const apiBase = `/${path}/api`.replace(/\/+/g, '/');
  const page = dashboardPage(apiBase, { frameAncestors: options.frameAncestors });
  const schedules = options.schedules === undefined ? null : new DashboardSchedules(options.schedules);

  @Controller(path)
  @UseGuards(guard)
  class BabelQueueDashboardController {
    constructor(
      @Inject(DASHBOARD_SERVICE) private readonly service: DashboardService,
      @Inject(SUBSCRIPTIONS_VIEW) private readonly subscriptions: SubscriptionsView,
    ) {}

    @Get()
    @Header('content-type', 'text/html; charset=utf-8')
    @Header('content-security-policy', page.contentSecurityPolicy)
    page(): string {
      return page.html;
    }

    @Get('api/topics')
    topics() {
      return this.service.summaries();
    }

    @Get('api/schedules')
    upcomingSchedules(@Query('urn') urn?: string) {
      if (schedules === null) {
        throw new NotFoundException('no schedules here: BabelQueueDashboardModule.forRoot({ schedules: { pool } })');
      }
      return schedules.upcoming(typeof urn === 'string' ? urn : undefined);
    }

    @Get('api/subscriptions')
    liveSubscriptions() {
      return this.subscriptions.list();
    }

    @Post('api/subscriptions/pause')
    pause(@Headers('content-type') type: string | undefined, @Body() body: SubscriptionTargetBody) {
      if (!requireJson(type)) throw new UnsupportedMediaTypeException(JSON_ONLY);
      return this.subscriptions.pause(body);
    }

    @Post('api/subscriptions/resume')
    resume(@Headers('content-type') type: string | undefined, @Body() body: SubscriptionTargetBody) {
      if (!requireJson(type)) throw new UnsupportedMediaTypeException(JSON_ONLY);
      return this.subscriptions.resume(body);
    }

    @Post('api/subscriptions/unblock')
    unblock(@Headers('content-type') type: string | undefined, @Body() body: UnblockBody) {
      if (!requireJson(type)) throw new UnsupportedMediaTypeException(JSON_ONLY);
      return this.subscriptions.unblock(body);
    }

    @Get('api/records')
    records(@Query() query: DashboardQuery) {
      return this.service.records(query);
    }

    @Post('api/redrive')
    redrive(@Headers('content-type') type: string | undefined, @Body() body: DashboardQuery) {
      if (!requireJson(type)) throw new UnsupportedMediaTypeException(JSON_ONLY);
      return this.service.redrive(body ?? {});
    }

    @Post('api/purge')
    purge(@Headers('content-type') type: string | undefined, @Body() body: DashboardQuery) {
      if (!requireJson(type)) throw new UnsupportedMediaTypeException(JSON_ONLY);
      return this.service.purge(body ?? {});
    }
  }
  return BabelQueueDashboardController;
}

/** A state change is a JSON request: a cross-site form (urlencoded, multipart, text/plain) cannot send one. */
const JSON_ONLY = 'redrive, purge, pause, resume and unblock take a JSON body (content-type: application/json)';

/**
 * A small web page in the app for its dead-letter topics: counts, records with filters, a record's body and
 * error, and redrive or purge of a selection (dry run first), with the CLI's semantics (docs/dead-letters.md);
 * above them, the app's subscriptions live, with pause, resume and unblock. Opt-in, and it refuses to start without a guard
 * unless told the app is private.
 */
@Module({})
export class BabelQueueDashboardModule {
  static forRoot(options: BabelQueueDashboardOptions): DynamicModule {
    checkDashboardOptions(options);
    const path = (options.path ?? 'babelqueue').replace(/^\/+|\/+$/g, '');
    const guard = options.guard ?? new OpenToOperators();
    const controller = dashboardController(path, guard, options);
    return {
      module: BabelQueueDashboardModule,
      // The guard class is built in this module: `imports` brings what it injects (an auth module, say).
      imports: [...(options.imports ?? []), headersModule(controller, securityHeaders(options.frameAncestors))],
      controllers: [controller],
      providers: [
        {
          provide: DASHBOARD_SERVICE,
          inject: [ModuleRef],
          useFactory: (moduleRef: ModuleRef) => new DashboardService(options, () => clientOf(options, moduleRef)),
        },
        {
          provide: SUBSCRIPTIONS_VIEW,
          inject: [ModuleRef],
          useFactory: (moduleRef: ModuleRef) =>
            new SubscriptionsView({
              server: () => serverOf(moduleRef),
              admin: () => adminConnectionOf(options.admin, () => clientOf(options, moduleRef)),
            }),
        },
      ],
    };
  }
}

/**
 * The security headers go on every response of the dashboard's routes, a guard's 403 and a 404 included: a
 * middleware runs before the guard.
 */
function applySecurityHeaders(headers: Readonly<Record<string, string>>) {
  return (_request: unknown, response: HeaderTarget, next: () => void): void => {
    for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
    next();
  };
}

/** A module of its own that puts the headers on the controller's routes. */
function headersModule(controller: Type, headers: Readonly<Record<string, string>>): Type {
  @Module({})
  class BabelQueueDashboardHeaders implements NestModule {
    configure(consumer: MiddlewareConsumer): void {
      consumer.apply(applySecurityHeaders(headers)).forRoutes(controller);
    }
  }
  return BabelQueueDashboardHeaders;
}

/** The app's server (BabelQueueModule's, unnamed registration), or null in an app without BabelQueueModule. */
function serverOf(moduleRef: ModuleRef): SubscriptionControl | null {
  try {
    return moduleRef.get(BabelPulsarServer, { strict: false });
  } catch {
    return null;
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
