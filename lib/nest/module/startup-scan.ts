import type { DiscoveryService, MetadataScanner } from '@nestjs/core';
import {
  PATTERN_EXTRAS_METADATA,
  PATTERN_HANDLER_METADATA,
  PATTERN_METADATA,
  TRANSPORT_METADATA,
} from '@nestjs/microservices/constants.js';
import { PatternHandler } from '@nestjs/microservices/enums/pattern-handler.enum.js';
import { BABEL_HANDLER_EXTRAS, BABEL_TRANSPORT } from '../constants.js';
import type { BabelHandlerExtras } from '../handler/babel-handler.decorator.js';

/** One message-pattern method found on a class. */
export interface FoundPattern {
  /** `Class.method` */
  where: string;
  pattern: string;
  /** Where the class is listed. */
  role: 'controller' | 'provider';
  /** Set for @BabelHandler methods. */
  babel: BabelHandlerExtras | undefined;
  /** @MessagePattern (a reply is expected) rather than @EventPattern. */
  expectsReply: boolean;
  /** True when the pattern binds to BabelPulsarServer (its transport, or no transport at all). */
  onThisTransport: boolean;
}

type Reflector = { getMetadata(key: string, target: object): unknown };
const reflector = Reflect as unknown as Reflector;

function patternsOf(
  scanner: MetadataScanner,
  type: { name: string; prototype: object },
  role: FoundPattern['role'],
): FoundPattern[] {
  const result: FoundPattern[] = [];
  for (const name of scanner.getAllMethodNames(type.prototype)) {
    const method = (type.prototype as Record<string, unknown>)[name];
    if (typeof method !== 'function') continue;
    const patterns = reflector.getMetadata(PATTERN_METADATA, method);
    if (!Array.isArray(patterns)) continue;
    const extras = reflector.getMetadata(PATTERN_EXTRAS_METADATA, method) as Record<string, unknown> | undefined;
    const transport = reflector.getMetadata(TRANSPORT_METADATA, method);
    const expectsReply = reflector.getMetadata(PATTERN_HANDLER_METADATA, method) === PatternHandler.MESSAGE;
    for (const pattern of patterns as unknown[]) {
      result.push({
        where: `${type.name}.${name}`,
        pattern: typeof pattern === 'string' ? pattern : JSON.stringify(pattern),
        role,
        babel: extras?.[BABEL_HANDLER_EXTRAS] as BabelHandlerExtras | undefined,
        expectsReply,
        onThisTransport: transport === undefined || transport === BABEL_TRANSPORT,
      });
    }
  }
  return result;
}

/** Every message-pattern method of the application's controllers and providers, each class once. */
export function scanPatterns(discovery: DiscoveryService, scanner: MetadataScanner): FoundPattern[] {
  const seen = new Set<unknown>();
  const result: FoundPattern[] = [];
  for (const [role, wrappers] of [
    ['controller', discovery.getControllers()],
    ['provider', discovery.getProviders()],
  ] as const) {
    for (const { metatype } of wrappers) {
      if (typeof metatype !== 'function' || seen.has(metatype)) continue;
      seen.add(metatype);
      result.push(...patternsOf(scanner, metatype as { name: string; prototype: object }, role));
    }
  }
  return result;
}
