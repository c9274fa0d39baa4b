/**
 * Where the server's subscriptions start when it made them only after waiting for the broker
 * (`brokerAtStart: 'optional'`, pure). At the earliest message the topic still stores: the app may have published
 * (its publisher connects on its own) before its consumers subscribed, and a new subscription at `Latest` would
 * never see those messages. An existing subscription keeps its position, since Pulsar applies the initial position
 * only when it creates one; a `subscriptionInitialPosition` the user set wins.
 */
export function positionAfterBrokerWait(configured: 'Latest' | 'Earliest' | undefined): 'Latest' | 'Earliest' {
  return configured ?? 'Earliest';
}
