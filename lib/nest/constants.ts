/** The transport id of BabelPulsarServer: in a hybrid app only it binds @BabelHandler methods. */
export const BABEL_TRANSPORT: unique symbol = Symbol('BABEL_PULSAR_TRANSPORT');

/** Extras key under which @BabelHandler records where the handler is declared. */
export const BABEL_HANDLER_EXTRAS = 'babelqueue';

/** DI token of the Pulsar client the module uses (native `pulsar-client` or PulsarWebSocketClient). */
export const BABEL_PULSAR_CLIENT = Symbol('BABEL_PULSAR_CLIENT');

/** Pattern-extras key set by @Idempotent (and @BabelHandler's idempotency): the handler has a store of its own. */
export const BABEL_OWN_IDEMPOTENCY = 'babelqueue:own-idempotency';
