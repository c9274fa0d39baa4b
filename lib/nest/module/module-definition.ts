import { ConfigurableModuleBuilder } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import type { BabelQueueModuleOptions } from './module-options.js';
import { BabelQueueOptionsError } from './options-error.js';
import { babelQueueExports, babelQueueProviders } from './module-providers.js';
import { describeValue } from '../../describe-value.js';

/** DI token of the options exactly as given to forRoot / returned by the forRootAsync factory. */
export const BABEL_QUEUE_OPTIONS = Symbol('BABEL_QUEUE_OPTIONS');

export interface BabelQueueModuleExtras {
  /** Register the module globally (its providers injectable everywhere without importing it). Default false. */
  isGlobal?: boolean;
  /**
   * Registers a named connection, next to the unnamed one or other named ones: its client is injected with
   * `@InjectBabelClient(name)`, its server taken with `getBabelServerToken(name)`, and it runs the handlers
   * declared `@BabelHandler(urn, { connection: name })`.
   */
  name?: string;
}

function registrationName(name: unknown): string | undefined {
  if (name === undefined) return undefined;
  if (typeof name !== 'string' || name.trim() === '')
    throw new BabelQueueOptionsError(`name must be a non-blank string such as 'billing', got ${describeValue(name)}`);
  return name.trim();
}

export const {
  ConfigurableModuleClass: BabelQueueConfigurableModule,
  OPTIONS_TYPE: BABEL_QUEUE_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: BABEL_QUEUE_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<BabelQueueModuleOptions>({ optionsInjectionToken: BABEL_QUEUE_OPTIONS })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createBabelQueueOptions')
  .setExtras<BabelQueueModuleExtras>({ isGlobal: false, name: undefined }, (definition, extras) => {
    const name = registrationName(extras.name);
    return {
      ...definition,
      global: extras.isGlobal === true,
      // DiscoveryService, for the start-up check's scan of the application's handlers.
      imports: [...(definition.imports ?? []), DiscoveryModule],
      providers: [...(definition.providers ?? []), ...babelQueueProviders(BABEL_QUEUE_OPTIONS, name)],
      exports: [...(definition.exports ?? []), ...babelQueueExports(name)],
    };
  })
  .build();

/** forRoot(options): the module options plus `isGlobal`. */
export type BabelQueueModuleRootOptions = typeof BABEL_QUEUE_OPTIONS_TYPE;
/** forRootAsync({ imports, inject, useFactory | useClass | useExisting, isGlobal }). */
export type BabelQueueModuleAsyncOptions = typeof BABEL_QUEUE_ASYNC_OPTIONS_TYPE;
