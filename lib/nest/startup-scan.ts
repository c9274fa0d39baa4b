import { BABEL_HANDLER_EXTRAS, BABEL_TRANSPORT } from './constants.js';
import type { BabelHandlerExtras } from './babel-handler.decorator.js';

// Nest's own metadata keys (stable across Nest 11 and 12); read directly rather than through a deep import.
const PATTERN_METADATA = 'microservices:pattern';
const PATTERN_EXTRAS_METADATA = 'microservices:pattern_extras';
const TRANSPORT_METADATA = 'microservices:transport';
const PATTERN_HANDLER_METADATA = 'microservices:handler_type';
const MESSAGE_PATTERN = 1;

/** The part of Nest's module and instance wrappers the scan reads. */
export interface ScannedModule {
  metatype: unknown;
  controllers: Map<unknown, { metatype: unknown }>;
  providers: Map<unknown, { metatype: unknown; instance?: unknown }>;
}

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

type AnyFunction = (...args: never[]) => unknown;
type ClassLike = AnyFunction & { prototype: unknown };
type Reflector = { getMetadata(key: string, target: object): unknown };
const reflector = Reflect as unknown as Reflector;

function methodsOf(type: ClassLike): Array<[string, AnyFunction]> {
  const found = new Map<string, AnyFunction>();
  for (let proto = type.prototype as object | null; proto && proto !== Object.prototype;) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name === 'constructor' || found.has(name)) continue;
      const descriptor = Object.getOwnPropertyDescriptor(proto, name);
      if (descriptor && typeof descriptor.value === 'function') found.set(name, descriptor.value as AnyFunction);
    }
    proto = Object.getPrototypeOf(proto) as object | null;
  }
  return [...found];
}

function patternsOf(type: ClassLike, role: FoundPattern['role']): FoundPattern[] {
  const result: FoundPattern[] = [];
  for (const [name, method] of methodsOf(type)) {
    const patterns = reflector.getMetadata(PATTERN_METADATA, method);
    if (!Array.isArray(patterns)) continue;
    const extras = reflector.getMetadata(PATTERN_EXTRAS_METADATA, method) as Record<string, unknown> | undefined;
    const transport = reflector.getMetadata(TRANSPORT_METADATA, method);
    const expectsReply = reflector.getMetadata(PATTERN_HANDLER_METADATA, method) === MESSAGE_PATTERN;
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
export function scanPatterns(modules: Iterable<ScannedModule>): FoundPattern[] {
  const seen = new Set<unknown>();
  const result: FoundPattern[] = [];
  for (const module of modules) {
    for (const [role, wrappers] of [
      ['controller', module.controllers],
      ['provider', module.providers],
    ] as const) {
      for (const { metatype } of wrappers.values()) {
        if (typeof metatype !== 'function' || seen.has(metatype)) continue;
        seen.add(metatype);
        result.push(...patternsOf(metatype as ClassLike, role));
      }
    }
  }
  return result;
}
