import { Logger } from '@nestjs/common';
import { CustomTransportStrategy, MessageHandler, Server } from '@nestjs/microservices';
import { EventEmitter } from 'node:events';
import type { ConsumerLogger, SettledEvent } from '../../consumer/index.js';
import type { LibraryClient } from '../../pulsar/client-types.js';
import { toLibraryClient } from '../../pulsar/library-client.js';
import type { BabelHandlerExtras } from '../handler/babel-handler.decorator.js';
import { BABEL_HANDLER_EXTRAS, BABEL_OWN_IDEMPOTENCY, BABEL_TRANSPORT } from '../constants.js';
import { ATTACH_RELAY, type BabelFailureRelay, type RelayTarget } from '../pipeline/failure-relay.js';
import { OUTCOME_LINE_TAPS, OutcomeLineTaps } from '../../consumer/outcome-lines.js';
import { nestProcessingHooks, type EndHook, type StartHook } from './processing-hooks.js';
import { HandlerDispatch } from './handler-dispatch.js';
import { foreignPatternWarning, routeOf } from './handler-registration.js';
import { HandlerRoutes } from './handler-routes.js';
import type { SubscriptionTarget } from './pause-control.js';
import { resolveServerOptions, type BabelPulsarServerOptions, type ResolvedServerOptions } from './server-options.js';
import { ServerLifecycle } from './server-lifecycle.js';
import type { BabelServerEvents, BabelServerStatus } from './status-monitor.js';
import type { SubscriptionSet, SubscriptionState } from './subscription-set.js';
import { ReplyProducers } from './reply-producers.js';
import { HandlerSettingsBook, serverDefaultsOf } from '../options/handler-settings.js';

export type { BabelServerEvents, BabelServerStatus } from './status-monitor.js';

/**
 * A NestJS CustomTransportStrategy that consumes Pulsar topics and routes each message to the
 * @BabelHandler method of its URN, settling it as the BabelQueue reference transport does. It keeps Nest's
 * contract and its handlers; the work is done by its parts: the handler routes, the dispatch to handlers, and the
 * lifecycle of what runs (the subscriptions, planned once, see SubscriptionSet, and the status monitor).
 */
export class BabelPulsarServer
  extends Server<BabelServerEvents, BabelServerStatus>
  implements CustomTransportStrategy, RelayTarget
{
  override readonly transportId = BABEL_TRANSPORT;
  // Handler errors must reach the settlement logic rather than be logged and swallowed by Nest.
  override readonly propagatesEventHandlerErrors = true;
  protected override readonly logger: Logger = new Logger(BabelPulsarServer.name);
  /** Where the testing kit takes the outcome lines of the messages it published (docs/testing.md). */
  readonly [OUTCOME_LINE_TAPS] = new OutcomeLineTaps();

  private readonly settings: ResolvedServerOptions;
  /** The client the server calls, with its intake (the native one behind an adapter that evens out its behaviour). */
  private readonly client: LibraryClient;
  private readonly events = new EventEmitter();
  private readonly routes: HandlerRoutes;
  /** Patterns registered without @BabelHandler, each warned about once. */
  private readonly foreignPatterns = new Set<string>();
  /** The failure relays of the application's modules that declare handlers (one per module). */
  private readonly relays = new Set<BabelFailureRelay>();
  private readonly dispatcher: HandlerDispatch;
  private readonly lifecycle: ServerLifecycle;
  /** Handler settings from configuration (the `handlers` option) and where each handler's came from. */
  private readonly handlerSettings: HandlerSettingsBook;
  /** The one start of this server: a second listen() (also a concurrent one) waits for it. */
  private starting: Promise<void> | null = null;
  private closing: Promise<void> | null = null;

  constructor(options: BabelPulsarServerOptions);
  /**
   * A BabelQueueModule registration's server: `settings` are the module's options resolved, checked once there.
   * @internal
   */
  constructor(options: BabelPulsarServerOptions, settings: ResolvedServerOptions);
  constructor(
    private readonly options: BabelPulsarServerOptions,
    settings?: ResolvedServerOptions,
  ) {
    super();
    this.settings = settings ?? resolveServerOptions(options);
    this.client = toLibraryClient(options.client);
    this.routes = new HandlerRoutes(this.settings.topics, this.settings.subscription);
    this.handlerSettings = new HandlerSettingsBook(this.settings.handlers, 'handlers');
    // An 'error' event without listeners would throw; errors are logged here instead.
    this.events.on('error', () => undefined);
    this.dispatcher = new HandlerDispatch({
      settings: this.settings,
      logger: this.consumerLogger(),
      metrics: () => this.lifecycle.consumerMetrics,
      processing: this.processingHooks,
    });
    this.lifecycle = new ServerLifecycle({
      settings: this.settings,
      client: this.client,
      givenClient: options.client,
      logger: this.consumerLogger(),
      outcomeLines: this[OUTCOME_LINE_TAPS],
      dispatcher: this.dispatcher,
      // The producers of the replies to requests (docs/request-response.md).
      replies: new ReplyProducers(this.client),
      events: this.events,
      publishStatus: (status) => this._status$.next(status),
    });
  }

  /** Called by the failure relay of each module with handlers, when this server joins their application. */
  [ATTACH_RELAY](relay: BabelFailureRelay): void {
    this.relays.add(relay);
  }

  /** Subscribes every topic, then calls back (with the error if any subscription failed). Idempotent. */
  listen(callback: (error?: unknown) => void): void {
    this.starting ??= this.start().catch((error: unknown) => {
      this.starting = null;
      throw error;
    });
    this.starting.then(
      () => callback(),
      (error: unknown) => callback(error),
    );
  }

  /** Stops receiving, lets in-flight messages settle (up to shutdownTimeoutMs), closes consumers. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.stop();
    return this.closing;
  }

  on<K extends keyof BabelServerEvents>(event: K, callback: BabelServerEvents[K]): this {
    this.events.on(event, callback as (...args: unknown[]) => void);
    return this;
  }

  /** The Pulsar client the server consumes with. */
  unwrap<T>(): T {
    return this.options.client as T;
  }

  /** The registration name this server serves (`BabelQueueModule.forRoot({ name })`); undefined = the unnamed one. */
  get connectionName(): string | undefined {
    return this.settings.name;
  }

  /** True once listen() was called (the module warns when a server with handlers is never started). */
  get wasStarted(): boolean {
    return this.starting !== null;
  }

  /**
   * Registers a handler on the topics and subscription its @BabelHandler names (default: the server's), if its
   * `connection` is this server's name. Rejects a second handler for one URN on one subscription, naming both.
   */
  override addHandler(
    pattern: unknown,
    callback: MessageHandler,
    isEventHandler = false,
    extras: Record<string, unknown> = {},
  ): void {
    const urn = this.normalizePattern(pattern as string);
    const babelExtras = extras[BABEL_HANDLER_EXTRAS] as BabelHandlerExtras | undefined;
    // Another named registration's handler: its own server runs it.
    if (babelExtras?.connection !== this.settings.name) return;
    if (this.lifecycle.subscriptions)
      throw new Error(`${babelExtras?.handler ?? urn}: handlers are registered before listen() or pause()`);
    if (!babelExtras) this.warnForeignPattern(urn, isEventHandler);
    const given = babelExtras && {
      ...babelExtras,
      ...this.handlerSettings.apply(urn, babelExtras.handler, babelExtras, serverDefaultsOf(this.settings)),
    };
    const { route, place } = routeOf(callback, given, extras[BABEL_OWN_IDEMPOTENCY] === true, this.settings);
    this.routes.add(urn, route, place);
    if (!this.messageHandlers.has(urn)) super.addHandler(pattern, callback, isEventHandler, extras);
  }

  /**
   * The handler of a URN. Patterns are stored as given (addHandler normalises a string to itself), so the map
   * lookup is enough: Nest's default first tries JSON.parse on every pattern, which throws for a URN.
   */
  override getHandlerByPattern(pattern: string): MessageHandler | null {
    return this.messageHandlers.get(pattern) ?? null;
  }

  /**
   * Consumers currently running, with how many messages each is handling (for health checks). `refused`: the
   * retry or dead-letter producers of the topic that the broker refuses for lack of permission, while it lasts.
   */
  describe(): SubscriptionState[] {
    return this.lifecycle.subscriptions?.describe() ?? [];
  }

  /**
   * Stops handling new messages on the consumers `target` names (none: all of them; a topic alone: all its
   * subscriptions; a pattern's label: every topic it found, and those it finds later) until resume(). Resolves
   * once the messages already being handled have been settled. Nothing is lost: what the client had already
   * received waits, unacknowledged, for resume() (or is redelivered after close). Before listen(), the consumers
   * start paused. Throws when `target` names no consumer of this server.
   */
  async pause(target?: SubscriptionTarget): Promise<void> {
    const settled = this.planned('pause()').setPaused(target, true, 'pause()');
    this.lifecycle.monitor.refresh();
    await settled;
    this.lifecycle.monitor.refresh();
  }

  /** Handles messages again on the consumers `target` names (none: all), those held while paused first. */
  resume(target?: SubscriptionTarget): void {
    void this.planned('resume()').setPaused(target, false, 'resume()');
    this.lifecycle.monitor.refresh();
  }

  /**
   * Unblocks a key blocked under `onExhausted: 'block-key'` on the consumers `target` names (none: all): its message
   * that failed for good is settled as usual (its dead-letter record written first, then the original acknowledged)
   * and the key's next message runs (docs/scale.md#per-key-order). Resolves with the settlement of each message
   * unblocked; throws when no consumer named has that key blocked.
   */
  async unblock(key: string, target?: SubscriptionTarget): Promise<SettledEvent[]> {
    const events = await this.planned('unblock()').unblock(target, key, 'unblock()');
    this.lifecycle.monitor.refresh();
    return events;
  }

  /** The subscriptions, planned from the handlers on first use. */
  private planned(call: string): SubscriptionSet {
    if (this.closing) throw new Error(`${call}: BabelPulsarServer was closed`);
    return this.lifecycle.planned(() => {
      this.handlerSettings.check(this.routes.handlerNames());
      return this.routes.subscribed();
    });
  }

  private async start(): Promise<void> {
    if (this.closing) throw new Error('BabelPulsarServer was closed; create a new one to listen again');
    // Before any subscription: a setting the client cannot honour fails the start whatever brokerAtStart says.
    const subscriptions = this.planned('listen()');
    for (const line of this.handlerSettings.lines) this.consumerLogger().log(line);
    const routes = subscriptions.planned.flatMap((subscription) => [...subscription.routes.values()]);
    this.dispatcher.planDirectCalls(routes, this.relays);
    await this.lifecycle.start(subscriptions);
  }

  /** Nest's processing hooks around each handler call (docs/architecture.md#nests-processing-hooks). */
  private readonly processingHooks = nestProcessingHooks(() => ({
    // Absent on Nest versions before the hooks.
    start: this.onProcessingStartHook as StartHook | undefined,
    end: this.onProcessingEndHook as EndHook | undefined,
    transportId: this.transportId,
    self: this,
  }));

  /** A pattern from @EventPattern / @MessagePattern: it runs, but without what @BabelHandler adds. */
  private warnForeignPattern(pattern: string, isEventHandler: boolean): void {
    if (!this.settings.startupWarnings || this.foreignPatterns.has(pattern)) return;
    this.foreignPatterns.add(pattern);
    this.consumerLogger().warn(foreignPatternWarning(pattern, isEventHandler));
  }

  /** Where the consumers log: the `logger` option, else the server's Nest Logger. */
  private consumerLogger(): ConsumerLogger {
    return this.settings.logger ?? this.logger;
  }

  private stop(): Promise<void> {
    return this.lifecycle.stop(this.starting);
  }
}
