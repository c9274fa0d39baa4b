import { Inject, type InjectionToken } from '@nestjs/common';
import { BabelQueueRedrive } from '../../redrive/babel-queue-redrive.js';
import { BabelPulsarClient } from '../client/babel-pulsar.client.js';
import { BabelPulsarServer } from '../server/babel-pulsar.server.js';
import { BABEL_PULSAR_CLIENT } from '../constants.js';
import { BabelProducerPool } from '../client/producer-pool.js';
import { BabelQueueHealthIndicator } from './health.indicator.js';
import { BabelOutbox } from '../../outbox/outbox.js';
import { OutboxRelay } from '../../outbox/relay.js';

/** DI token of a registration's name (`{ name: undefined }` for the unnamed one). */
export const BABEL_QUEUE_NAME = Symbol('BABEL_QUEUE_NAME');

export interface RegistrationName {
  name: string | undefined;
}

// A named registration exports string tokens (one per name); the unnamed one exports the classes themselves.
const token =
  (kind: string, unnamed: InjectionToken) =>
  (name?: string): InjectionToken =>
    name === undefined ? unnamed : `babelqueue:${name.trim()}:${kind}`;

/** The BabelPulsarClient of `BabelQueueModule.forRoot({ name })` (no name: the class token, BabelPulsarClient). */
export const getBabelClientToken = token('BabelPulsarClient', BabelPulsarClient);
/** The BabelPulsarServer of a registration, to pass as `strategy` (no name: BabelPulsarServer). */
export const getBabelServerToken = token('BabelPulsarServer', BabelPulsarServer);
/** The Pulsar client of a registration (no name: BABEL_PULSAR_CLIENT). */
export const getPulsarClientToken = token('PulsarClient', BABEL_PULSAR_CLIENT);
/** The retry / dead-letter producer pool of a registration (no name: BabelProducerPool). */
export const getBabelProducerPoolToken = token('BabelProducerPool', BabelProducerPool);
/** The redrive service of a registration (no name: BabelQueueRedrive). */
export const getBabelRedriveToken = token('BabelQueueRedrive', BabelQueueRedrive);
/** The health indicator of a registration (no name: BabelQueueHealthIndicator). */
export const getBabelHealthIndicatorToken = token('BabelQueueHealthIndicator', BabelQueueHealthIndicator);
/** The outbox writer of a registration (no name: BabelOutbox). */
export const getBabelOutboxToken = token('BabelOutbox', BabelOutbox);
/** The outbox relay of a registration, null without `outbox: { pool }` (no name: OutboxRelay). */
export const getBabelOutboxRelayToken = token('OutboxRelay', OutboxRelay);

/** Injects the BabelPulsarClient of the registration named `name` (no name: the unnamed registration's). */
export const InjectBabelClient = (name?: string): PropertyDecorator & ParameterDecorator =>
  Inject(getBabelClientToken(name));
