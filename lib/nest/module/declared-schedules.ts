import type { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { PATTERN_METADATA } from '@nestjs/microservices/constants.js';
import { BABEL_SCHEDULE_METADATA, type DeclaredScheduleOptions } from '../../schedule/index.js';
import { BabelQueueOptionsError } from './options-error.js';

/** A @BabelSchedule found on a method, with the URN of the handler it decorates. */
export interface DeclaredSchedule extends DeclaredScheduleOptions {
  urn: string;
  /** `Class.method` */
  where: string;
}

type Reflector = { getMetadata(key: string, target: object): unknown };
const reflector = Reflect as unknown as Reflector;

/** Every @BabelSchedule of the application's controllers and providers; each must sit on a @BabelHandler method. */
export function scanDeclaredSchedules(discovery: DiscoveryService, scanner: MetadataScanner): DeclaredSchedule[] {
  const seen = new Set<unknown>();
  const found: DeclaredSchedule[] = [];
  for (const { metatype } of [...discovery.getControllers(), ...discovery.getProviders()]) {
    if (typeof metatype !== 'function' || seen.has(metatype)) continue;
    seen.add(metatype);
    const prototype = (metatype as { prototype: object }).prototype;
    for (const name of scanner.getAllMethodNames(prototype)) {
      const method = (prototype as Record<string, unknown>)[name];
      if (typeof method !== 'function') continue;
      const declared = reflector.getMetadata(BABEL_SCHEDULE_METADATA, method) as DeclaredScheduleOptions[] | undefined;
      if (!declared) continue;
      const where = `${metatype.name}.${name}`;
      const patterns = reflector.getMetadata(PATTERN_METADATA, method);
      const urn = Array.isArray(patterns) ? patterns.find((pattern) => typeof pattern === 'string') : undefined;
      if (urn === undefined) {
        throw new BabelQueueOptionsError(
          `@BabelSchedule on ${where} needs @BabelHandler(urn) on the same method: the schedule fires that URN`,
        );
      }
      for (const options of declared) found.push({ ...options, urn: urn as string, where });
    }
  }
  return found;
}
