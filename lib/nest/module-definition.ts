import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { BabelQueueModuleOptions } from './module-options.js';
import { BABEL_QUEUE_EXPORTS, babelQueueProviders } from './module-providers.js';

/** DI token of the options exactly as given to forRoot / returned by the forRootAsync factory. */
export const BABEL_QUEUE_OPTIONS = Symbol('BABEL_QUEUE_OPTIONS');

export interface BabelQueueModuleExtras {
  /** Register the module globally (its providers injectable everywhere without importing it). Default false. */
  isGlobal?: boolean;
}

export const {
  ConfigurableModuleClass: BabelQueueConfigurableModule,
  OPTIONS_TYPE: BABEL_QUEUE_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: BABEL_QUEUE_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<BabelQueueModuleOptions>({ optionsInjectionToken: BABEL_QUEUE_OPTIONS })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createBabelQueueOptions')
  .setExtras<BabelQueueModuleExtras>({ isGlobal: false }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal === true,
    providers: [...(definition.providers ?? []), ...babelQueueProviders(BABEL_QUEUE_OPTIONS)],
    exports: [...(definition.exports ?? []), ...BABEL_QUEUE_EXPORTS],
  }))
  .build();

/** forRoot(options): the module options plus `isGlobal`. */
export type BabelQueueModuleRootOptions = typeof BABEL_QUEUE_OPTIONS_TYPE;
/** forRootAsync({ imports, inject, useFactory | useClass | useExisting, isGlobal }). */
export type BabelQueueModuleAsyncOptions = typeof BABEL_QUEUE_ASYNC_OPTIONS_TYPE;
