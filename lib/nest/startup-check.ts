import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { BabelPulsarServer, serverStartedSince } from './babel-pulsar.server.js';
import type { ResolvedModuleOptions } from './module-options.js';
import { BABEL_QUEUE_RESOLVED_OPTIONS } from './module-tokens.js';
import { BABEL_QUEUE_NAME, type RegistrationName } from './registration-tokens.js';
import { scanPatterns, type ScannedModule } from './startup-scan.js';
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
    @Inject(BabelPulsarServer) private readonly server: BabelPulsarServer,
    @Inject(BABEL_QUEUE_NAME) private readonly registration: RegistrationName,
    @Inject(BABEL_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
  ) {}

  onApplicationBootstrap(): void {
    const { startupWarnings } = this.options;
    if (!startupWarnings.enabled) return;
    const modules = [...this.modules.values()] as unknown as ScannedModule[];
    const patterns = scanPatterns(modules);
    if (!checkedApplications.has(this.modules)) {
      checkedApplications.add(this.modules);
      const registrations = modules.flatMap((module) => {
        const wrapper = module.providers.get(BABEL_QUEUE_NAME);
        const value = wrapper?.instance as RegistrationName | undefined;
        return value ? [value.name] : [];
      });
      for (const warning of wiringWarnings(patterns, registrations)) this.logger.warn(warning);
    }
    const handlers = handlersOf(patterns, this.registration.name);
    if (handlers.length === 0 || this.server.wasStarted) return;
    const bootstrappedAt = Date.now();
    this.timer = setTimeout(() => {
      this.timer = null;
      // A server of the user's own (same connection name) may consume for the module's.
      if (!this.server.wasStarted && !serverStartedSince(this.registration.name, bootstrappedAt))
        this.logger.warn(notStartedWarning(this.registration.name, handlers, startupWarnings.serverNotStartedAfterMs));
    }, startupWarnings.serverNotStartedAfterMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
