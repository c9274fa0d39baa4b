import { EnvelopeCodec } from '../envelope/index.js';
import { BQ, reconcileAttempts, routingUrn, schemaVersionGate } from '../pulsar/binding.js';
import type { InboundMessage, Inspection } from './decision-types.js';

/**
 * Classifies a delivery before any handler runs (pure): the bq-schema-version gate first, without
 * touching the body (docs/contract.md#the-schema-version-gate), then decode and validation (poison), then routing (docs/contract.md#routing).
 */
export function inspect(message: InboundMessage): Inspection {
  const gateValue = message.properties[BQ.schemaVersion];
  if (schemaVersionGate(gateValue) === 'reject') {
    return { kind: 'gate-rejected', received: gateValue ?? '' };
  }

  const decoded = EnvelopeCodec.decode(message.payload);
  const reason = decoded.error ?? EnvelopeCodec.rejection(decoded.envelope);
  const attempts = reconcileAttempts({
    bodyAttempts: decoded.error === null ? decoded.envelope.attempts : undefined,
    attemptsProperty: message.properties[BQ.attempts],
    redeliveryCount: message.redeliveryCount,
  });
  if (reason !== null || !EnvelopeCodec.accepts(decoded.envelope)) {
    return { kind: 'poison', reason: reason ?? 'the envelope was not accepted', attempts };
  }

  const envelope = EnvelopeCodec.withAttempts(decoded.envelope, attempts);
  const route = routingUrn(message.properties, envelope);
  return {
    kind: 'dispatch',
    urn: route.urn,
    envelope,
    attempts,
    mismatch: route.mismatch ? { propertyUrn: route.propertyUrn, bodyUrn: route.bodyUrn } : null,
    warnings: decoded.warnings,
  };
}
