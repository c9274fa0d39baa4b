import type { Type } from '@nestjs/common';
import type { BabelQueueHooks } from '../../consumer/index.js';
import { isPlainObject, type RaiseOptionError } from '../../options/option-table.js';

/**
 * Settlement hooks: a plain object of functions, or an injectable class implementing BabelQueueHooks. A class is
 * resolved through Nest's DI, so it can inject other services: the instance registered as a provider anywhere in
 * the application is used, else the module creates one (its dependencies then come from global modules and the
 * `imports` of forRootAsync).
 */
export type BabelQueueHooksOption = BabelQueueHooks | Type<BabelQueueHooks>;

export const HOOK_NAMES = ['onError', 'onUnknownUrn', 'onRoutingMismatch', 'onDeadLetter'] as const;
export type HookName = (typeof HOOK_NAMES)[number];

export type ResolvedHooks =
  | { kind: 'none' }
  | { kind: 'object'; hooks: BabelQueueHooks }
  | { kind: 'class'; type: Type<BabelQueueHooks>; methods: HookName[] };

function hookMethods(type: Type<BabelQueueHooks>): HookName[] {
  const found = new Set<HookName>();
  for (
    let proto = type.prototype as object | null;
    proto && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    for (const name of HOOK_NAMES) {
      const descriptor = Object.getOwnPropertyDescriptor(proto, name);
      if (descriptor && typeof descriptor.value === 'function') found.add(name);
    }
  }
  return HOOK_NAMES.filter((name) => found.has(name));
}

/** The `hooks` option: none, an object of functions, or an injectable class with at least one hook method. */
export function resolveHooks(hooks: unknown, name: string, raise: RaiseOptionError): ResolvedHooks {
  if (hooks === undefined || hooks === null) return { kind: 'none' };
  if (typeof hooks === 'function') {
    const type = hooks as Type<BabelQueueHooks>;
    const methods = hookMethods(type);
    if (methods.length === 0)
      return raise(
        `${name} class ${type.name || '(anonymous)'} has none of the hook methods ${HOOK_NAMES.join(', ')}`,
        'type',
      );
    return { kind: 'class', type, methods };
  }
  if (!isPlainObject(hooks))
    return raise(`${name} must be an object of functions (${HOOK_NAMES.join(', ')}) or an injectable class`, 'type');
  for (const [key, value] of Object.entries(hooks)) {
    if ((HOOK_NAMES as readonly string[]).includes(key)) {
      if (value !== undefined && typeof value !== 'function') raise(`${name}.${key} must be a function`, 'type');
    } else if (typeof value === 'function' && /^on[A-Z]/.test(key)) {
      // Other members (state, helpers) may ride along; an unknown on… function is a misspelt hook.
      raise(`${name}.${key} is not a hook; allowed: ${HOOK_NAMES.join(', ')}`, 'type');
    }
  }
  return { kind: 'object', hooks: hooks as BabelQueueHooks };
}
