// The one place this library reads a Nest field that is not part of Nest's typed public API. Everything else
// goes through exported classes and their public methods. Pinned by test/unit/nest/nest-internals.test.ts (Nest
// 12, the dev dependency) and the Nest 11 compatibility suite.
import type { ModuleRef } from '@nestjs/core';
import type { NestContainer } from '@nestjs/core/injector/container.js';

/**
 * The container behind a ModuleRef. Nest keeps it in ModuleRef's protected `container` field (since Nest 6); the
 * failure relay needs it to build the same exception-filter list Nest builds (module-scoped filter classes and
 * the application's global filters).
 */
export function containerOf(moduleRef: ModuleRef): NestContainer {
  const container = (moduleRef as unknown as { container?: NestContainer }).container;
  if (!container || typeof container.getModules !== 'function') {
    throw new Error(
      '@babelqueue/nestjs-pulsar: this version of @nestjs/core keeps no container on ModuleRef; ' +
        'please report it with your @nestjs/core version',
    );
  }
  return container;
}
