import {
  Catch,
  Inject,
  Injectable,
  type ArgumentsHost,
  type ExceptionFilter,
  type OnModuleDestroy,
  type Type,
} from '@nestjs/common';
import { EXCEPTION_FILTERS_METADATA } from '@nestjs/common/constants.js';
import { ModuleRef, ModulesContainer } from '@nestjs/core';
import { ExceptionFiltersContext } from '@nestjs/microservices/context/exception-filters-context.js';
import { RpcExceptionsHandler } from '@nestjs/microservices/exceptions/rpc-exceptions-handler.js';
import { throwError, type Observable, type Subscription } from 'rxjs';
import { BabelContext, handlerOf, type HandlerRef } from '../context/babel.context.js';
import { BabelBatchContext } from '../context/babel-batch.context.js';
import { RelayedFailure } from './failure-classify.js';
import { planDirectCall, type DirectCall } from './direct-call.js';
import { containerOf } from './nest-internals.js';

/** What a BabelPulsarServer offers the relays of the application it is started in (see BabelFailureRelay). */
export const ATTACH_RELAY = Symbol('babelqueue.attachRelay');
export interface RelayTarget {
  [ATTACH_RELAY](relay: BabelFailureRelay): void;
}
const isRelayTarget = (value: unknown): value is RelayTarget =>
  typeof value === 'object' && value !== null && typeof (value as Partial<RelayTarget>)[ATTACH_RELAY] === 'function';

/** Matches every exception (a catch-all), and tells the relay's own entry apart from the user's filters. */
class AnyFailure {
  static [Symbol.hasInstance](_value: unknown): boolean {
    return true;
  }
}

interface FilterEntry {
  exceptionMetatypes: Type<unknown>[];
}

/**
 * The exception filter @BabelHandler puts on each handler method. Nest calls it for a failure of any layer
 * (handler, pipes, guards, interceptors: method, class or global), before its own default filter would log the
 * failure and replace it with "Internal server error". It offers the failure to the user's exception filters in
 * the order Nest would (method, class, global); the first that catches it decides the outcome. When none does,
 * the exception itself goes back to the transport, which settles it and logs it once.
 */
@Catch(AnyFailure)
@Injectable()
export class BabelFailureRelay implements ExceptionFilter, OnModuleDestroy {
  private readonly userFilters = new Map<Type<unknown>, Map<string | symbol, RpcExceptionsHandler>>();
  private moduleKey: string | undefined;
  private readonly servers: Subscription;

  constructor(
    @Inject(ModuleRef) private readonly moduleRef: ModuleRef,
    @Inject(ModulesContainer) modules: ModulesContainer,
  ) {
    // Every microservice server started on this application is announced here (before its handlers are
    // registered): a BabelPulsarServer learns from the relay how to call the handlers of this module directly.
    this.servers = modules.getRpcTargetRegistry().subscribe((server) => {
      if (isRelayTarget(server)) server[ATTACH_RELAY](this);
    });
  }

  onModuleDestroy(): void {
    this.servers.unsubscribe();
  }

  /**
   * A direct call of a handler this relay's module declares, when Nest's pipeline has nothing to run for it
   * (see planDirectCall); undefined for another module's handler, or when the pipeline is needed.
   */
  directCallOf(handler: HandlerRef): DirectCall | undefined {
    const container = containerOf(this.moduleRef);
    const config = container.applicationConfig;
    return config && planDirectCall(container, config, this.ownModuleKey(container), handler);
  }

  catch(exception: unknown, host: ArgumentsHost): Observable<unknown> {
    const context: unknown = host.getArgByIndex(1);
    const handler =
      context instanceof BabelContext || context instanceof BabelBatchContext ? handlerOf(context) : undefined;
    const decided = handler && this.filtersOf(handler).invokeCustomFilters(exception, host);
    if (decided) return decided;
    return throwError(() => new RelayedFailure(exception));
  }

  /** The user's filters of one handler method, in Nest's order, without this relay (built once per method). */
  private filtersOf({ owner, method }: HandlerRef): RpcExceptionsHandler {
    let byMethod = this.userFilters.get(owner);
    if (!byMethod) this.userFilters.set(owner, (byMethod = new Map()));
    let handler = byMethod.get(method);
    if (handler) return handler;
    const container = containerOf(this.moduleRef);
    const filters = new ExceptionFiltersContext(container, container.applicationConfig!);
    type Method = Parameters<ExceptionFiltersContext['create']>[1];
    const callback = (owner.prototype as Record<string | symbol, Method>)[method]!;
    // Nest reads class metadata from an instance's prototype: an object of the class stands in for the
    // controller (only its class is looked at). create() selects the module whose filter classes are resolved;
    // createContext() lists global, class and method filters, which Nest consults in reverse.
    const instance = Object.create(owner.prototype as object) as object;
    filters.create(instance, callback, this.ownModuleKey(container));
    const entries = filters.createContext<unknown[], FilterEntry[]>(instance, callback, EXCEPTION_FILTERS_METADATA);
    handler = new RpcExceptionsHandler();
    handler.setCustomFilters(
      entries.filter((entry) => !entry.exceptionMetatypes.includes(AnyFailure)).reverse() as never,
    );
    byMethod.set(method, handler);
    return handler;
  }

  /** The module this relay instance belongs to: the handler's own, whose filter classes Nest resolves. */
  private ownModuleKey(container: ReturnType<typeof containerOf>): string {
    if (this.moduleKey !== undefined) return this.moduleKey;
    for (const [key, module] of container.getModules()) {
      if (module.injectables.get(BabelFailureRelay)?.instance === this) return (this.moduleKey = key);
    }
    throw new Error('BabelFailureRelay: the module of this handler was not found in the Nest container');
  }
}
