import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModulesContainer } from '@nestjs/core';
import { BabelPulsarServer } from '../server/babel-pulsar.server.js';
import { BABEL_TRANSPORT } from '../constants.js';
import type { ResolvedModuleOptions } from './module-options.js';
import { BABEL_QUEUE_RESOLVED_OPTIONS } from './module-tokens.js';
import { BABEL_QUEUE_NAME, type RegistrationName } from './registration-tokens.js';
import { scanPatterns } from './startup-scan.js';
import { handlersOf, notStartedWarning, wiringWarnings } from './startup-warnings.js';

/** Applications whose wiring was already checked: with several registrations, the first one checks for all. */
const checkedApplications = new WeakSet<object>();

/**
 * Start-up warnings for what would otherwise fail in silence (docs/configuration.md#warnings-at-start-up): handlers on
 * providers, several unnamed registrations, unknown connection names, and a server with handlers that was never
 * started a few seconds after the application was up.
 */
@Injectable()
export class BabelQueueStartupCheck implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('BabelQueueModule');
  private timer: NodeJS.Timeout | null = null;

  constructor(
    @Inject(ModulesContainer) private readonly modules: ModulesContainer,
    @Inject(DiscoveryService) private readonly discovery: DiscoveryService,
    @Inject(MetadataScanner) private readonly scanner: MetadataScanner,
    @Inject(BabelPulsarServer) private readonly server: BabelPulsarServer,
    @Inject(BABEL_QUEUE_NAME) private readonly registration: RegistrationName,
    @Inject(BABEL_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
  ) {}

  onApplicationBootstrap(): void {
    const { startupWarnings } = this.options;
    if (!startupWarnings.enabled) return;
    const patterns = scanPatterns(this.discovery, this.scanner);
    if (!checkedApplications.has(this.modules)) {
      checkedApplications.add(this.modules);
      const registrations = this.discovery
        .getProviders()
        .filter((wrapper) => wrapper.token === BABEL_QUEUE_NAME)
        .flatMap((wrapper) => {
          const value = wrapper.instance as RegistrationName | undefined;
          return value ? [value.name] : [];
        });
      for (const warning of wiringWarnings(patterns, registrations)) this.logger.warn(warning);
    }
    const handlers = handlersOf(patterns, this.registration.name);
    if (handlers.length === 0 || this.server.wasStarted) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.server.wasStarted && !this.startedElsewhere(this.registration.name))
        this.logger.warn(notStartedWarning(this.registration.name, handlers, startupWarnings.serverNotStartedAfterMs));
    }, startupWarnings.serverNotStartedAfterMs);
    this.timer.unref();
  }

  /**
   * True when this application started a BabelPulsarServer of its own for `connection`: it consumes for the
   * module's server. Every server of the application is announced on Nest's RPC target registry (a replay).
   */
  private startedElsewhere(connection: string | undefined): boolean {
    let started = false;
    this.modules
      .getRpcTargetRegistry()
      .subscribe((target) => {
        const server = target as Partial<BabelPulsarServer> | null;
        if (server?.transportId === BABEL_TRANSPORT && server.connectionName === connection && server.wasStarted)
          started = true;
      })
      .unsubscribe();
    return started;
  }

  onApplicationShutdown(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
