/** The transport id of BabelPulsarServer: in a hybrid app only it binds @BabelHandler methods. */
export const BABEL_TRANSPORT: unique symbol = Symbol('BABEL_PULSAR_TRANSPORT');

/** Extras key under which @BabelHandler records where the handler is declared. */
export const BABEL_HANDLER_EXTRAS = 'babelqueue';

/** DI token of the Pulsar client the module uses (native `pulsar-client` or PulsarWebSocketClient). */
export const BABEL_PULSAR_CLIENT = Symbol('BABEL_PULSAR_CLIENT');
