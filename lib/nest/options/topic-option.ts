import { describeValue } from '../../describe-value.js';
import { errorText } from '../../envelope/error-text.js';
import { option, type RaiseOptionError } from '../../options/option-table.js';
import { parseTopic } from '../../pulsar/topic-name.js';

/** A topic name the client can parse, trimmed. */
export function checkTopicName(topic: unknown, name: string, raise: RaiseOptionError): string {
  if (typeof topic !== 'string' || topic.trim() === '')
    return raise(
      `${name} must be a non-blank string, a topic name such as "orders" or "persistent://public/default/orders", got ${describeValue(topic)}`,
      'type',
    );
  try {
    parseTopic(topic.trim());
  } catch (error) {
    return raise(`${name}: ${errorText(error)}`, 'type');
  }
  return topic.trim();
}

/** An optional topic name (see checkTopicName): the one rule of every surface that takes a topic. */
export const topicOption = () =>
  option<string>((value, name, raise) => (value === undefined ? undefined : checkTopicName(value, name, raise)));
