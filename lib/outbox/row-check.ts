import { EnvelopeCodec } from '../envelope/index.js';
import { pulsarProperties } from '../pulsar/binding.js';
import { parseTopic } from '../pulsar/topic-name.js';
import { errorText } from '../envelope/error-text.js';
import { OutboxRowError } from './failure.js';

/**
 * The `bq-*` properties of a row about to be published, read from its body with the consumer's codec. Throws an
 * OutboxRowError when the body is not an envelope a consumer accepts (a row written by other means than
 * BabelOutbox.write, or damaged), or when the topic is not a topic name: such a row is never published.
 */
export function checkedRowProperties(body: Buffer, topic: string): Record<string, string> {
  try {
    parseTopic(topic);
  } catch (error) {
    throw new OutboxRowError(`the row's topic ${JSON.stringify(topic)} is not a topic name: ${errorText(error)}`);
  }
  const decoded = EnvelopeCodec.decode(body);
  const problem = decoded.error ?? EnvelopeCodec.rejection(decoded.envelope);
  if (problem !== null) throw new OutboxRowError(`the row's body is not a BabelQueue envelope: ${problem}`);
  return pulsarProperties(decoded.envelope as Record<string, unknown>);
}
