import type { MessageHandler } from '@nestjs/microservices';
import { raiseStandardError } from '../../options/option-table.js';
import type { BabelHandlerExtras } from '../handler/babel-handler.decorator.js';
import { DEFAULT_PATTERN_DISCOVERY_MS } from '../options/handler-options.js';
import type { BindingPlace, Route } from './handler-routes.js';
import { checkDelayable, isProducer, type ResolvedServerOptions } from './server-options.js';
import { honoursDeliveryTimes } from '../../consumer/settle-request.js';

/**
 * A handler as `@BabelHandler` declared it, turned into the route the server runs and the place it consumes
 * (pure): throws when its settings cannot work with the server's (a retry policy where delays cannot be honoured,
 * its own topic with a single retry producer).
 */
export function routeOf(
  handler: MessageHandler,
  extras: BabelHandlerExtras | undefined,
  ownIdempotency: boolean,
  settings: Pick<ResolvedServerOptions, 'retry' | 'subscriptionType' | 'inbox' | 'ordering'>,
): { route: Route; place: BindingPlace } {
  const name = extras?.handler ?? 'an unnamed handler';
  const { maxAttempts, retryPolicy, timeoutMs, topic, subscription, owner, method, schema, consumerOptions } =
    extras ?? {};
  const { batch, topicsPattern, patternDiscoveryMs, isRetriable, subscriptionType, concurrency, unknownUrn, inbox } =
    extras ?? {};
  const { circuitBreaker, maxPerSecond } = extras ?? {};
  const { ordering, onExhausted } = extras ?? {};
  if (inbox === true && !settings.inbox)
    throw new TypeError(
      `${name} asks for the inbox, but the server has none: give the module or server inbox: { store: new PostgresInbox({ pool }) }`,
    );
  if (batch !== undefined && (inbox ?? settings.inbox?.every) === true)
    throw new TypeError(
      `${name} is a batch handler: the inbox runs one message per transaction; set inbox: false on it`,
    );
  const type = subscriptionType ?? settings.subscriptionType;
  if (batch !== undefined && (ordering ?? settings.ordering) === 'key')
    throw new TypeError(
      `${name} is a batch handler: ordering 'key' runs one message of a key at a time; set ordering: 'none' on it`,
    );
  // Retries in place wait in this process, so their delays hold on every subscription type.
  if (retryPolicy && (ordering ?? settings.ordering) !== 'key')
    checkDelayable(settings.retry === 'nack', type, `${name} retryPolicy`, raiseStandardError);
  if (subscriptionType !== undefined && settings.retry === 'nack' && !honoursDeliveryTimes(subscriptionType))
    throw new TypeError(
      `${name} subscriptionType ${subscriptionType}: retry 'nack' needs a Shared or KeyShared subscription; ` +
        "use retry 'republish'",
    );
  if ((topic !== undefined || topicsPattern !== undefined) && isProducer(settings.retry)) {
    throw new TypeError(
      `${name} names its own ${topic !== undefined ? 'topic' : 'topicsPattern'}, but options.retry is a single ` +
        "producer: a retry goes back to its own topic; use retry 'republish'",
    );
  }
  const route: Route = {
    handler,
    name,
    ...(owner !== undefined && method !== undefined && { declaredAt: { owner, method } }),
    ...(timeoutMs !== undefined && { timeoutMs }),
    ...(schema !== undefined && { schema }),
    ...(consumerOptions !== undefined && { consumerOptions }),
    ...(isRetriable !== undefined && { isRetriable }),
    ...(ownIdempotency && { ownIdempotency: true }),
    ...(batch !== undefined && { batch }),
    ...(subscriptionType !== undefined && { subscriptionType }),
    ...(concurrency !== undefined && { concurrency }),
    ...(unknownUrn !== undefined && { unknownUrn }),
    ...(inbox !== undefined && { inbox }),
    ...(circuitBreaker !== undefined && { circuitBreaker }),
    ...(maxPerSecond !== undefined && { maxPerSecond }),
    ...(ordering !== undefined && { ordering }),
    ...(onExhausted !== undefined && { onExhausted }),
    ...(maxAttempts !== undefined && { maxAttempts }),
    ...(retryPolicy !== undefined && { retryPolicy }),
  };
  const place: BindingPlace = {
    ...(topic !== undefined && { topic }),
    ...(subscription !== undefined && { subscription }),
    ...(topicsPattern !== undefined && {
      pattern: { pattern: topicsPattern, discoveryMs: patternDiscoveryMs ?? DEFAULT_PATTERN_DISCOVERY_MS },
    }),
  };
  return { route, place };
}

/** A pattern from @EventPattern / @MessagePattern: it runs, but without what @BabelHandler adds (pure). */
export function foreignPatternWarning(pattern: string, isEventHandler: boolean): string {
  return (
    `${isEventHandler ? '@EventPattern' : '@MessagePattern'}('${pattern}') is bound to BabelPulsarServer: use ` +
    `@BabelHandler('${pattern}') instead, or its failures are reported as "Internal server error" without ` +
    'their cause. To keep a pattern for another transport off this one, give it that transport: ' +
    `@EventPattern('${pattern}', Transport.KAFKA)`
  );
}
