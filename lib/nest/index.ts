export { BABEL_PULSAR_CLIENT, BABEL_TRANSPORT } from './constants.js';
export { BabelHandler } from './babel-handler.decorator.js';
export type { BabelHandlerOptions } from './babel-handler.decorator.js';
export { BabelContext } from './babel.context.js';
export { BabelPulsarServer } from './babel-pulsar.server.js';
export type { BabelServerEvents, BabelServerStatus } from './babel-pulsar.server.js';
export type { BabelPulsarServerOptions, ProducerSource } from './server-options.js';
