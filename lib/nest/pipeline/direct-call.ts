import type { ApplicationConfig } from '@nestjs/core';
import type { NestContainer } from '@nestjs/core/injector/container.js';
import { GuardsConsumer, GuardsContextCreator } from '@nestjs/core/guards/index.js';
import { InterceptorsConsumer, InterceptorsContextCreator } from '@nestjs/core/interceptors/index.js';
import { PipesConsumer, PipesContextCreator } from '@nestjs/core/pipes/index.js';
import { ExceptionFiltersContext } from '@nestjs/microservices/context/exception-filters-context.js';
import { RpcContextCreator } from '@nestjs/microservices/context/rpc-context-creator.js';
import { DEFAULT_CALLBACK_METADATA } from '@nestjs/microservices/context/rpc-metadata-constants.js';
import { RpcProxy } from '@nestjs/microservices/context/rpc-proxy.js';
import type { HandlerRef } from '../context/babel.context.js';

/** Calls a handler method with its parameters resolved as Nest resolves them (`@Payload()`, `@Ctx()`, custom). */
export type DirectCall = (data: unknown, context: unknown) => unknown;

interface ParamMetadata {
  index: number;
  extractValue: (...args: unknown[]) => unknown;
  pipes: unknown[];
}

type Callback = (...args: unknown[]) => unknown;

/**
 * A direct call for a handler method with nothing for Nest's pipeline to run: no guard, interceptor or pipe at any
 * level (method, class, global, parameter) and no global pre-request hook. Undefined when it has one, when its
 * controller is not a singleton, or when `config` may not be the one the microservice applies (see below): the
 * message then goes through Nest's pipeline. Exception filters do not count: they only act on a failure, and the
 * failure relay consults them for a direct call as for any other.
 */
export function planDirectCall(
  container: NestContainer,
  config: ApplicationConfig,
  moduleKey: string,
  { owner, method }: HandlerRef,
): DirectCall | undefined {
  // A hybrid application's microservice applies the HTTP application's globals only with inheritAppConfig, which
  // cannot be told from here: there, the message always takes Nest's pipeline.
  if (container.getHttpAdapterRef()) return undefined;
  const module = container.getModules().get(moduleKey);
  const wrapper = [...(module?.controllers.values() ?? [])].find((candidate) => candidate.metatype === owner);
  if (!wrapper || !wrapper.isDependencyTreeStatic() || !wrapper.instance) return undefined;
  const instance = wrapper.instance as Record<string | symbol, Callback>;
  const callback = instance[method];
  if (typeof callback !== 'function') return undefined;
  const preRequestHooks = (config as { getGlobalPreRequestHooks?(): unknown[] }).getGlobalPreRequestHooks?.() ?? [];
  const guards = new GuardsContextCreator(container, config);
  const interceptors = new InterceptorsContextCreator(container, config);
  const pipes = new PipesContextCreator(container, config);
  if (
    preRequestHooks.length > 0 ||
    guards.create(instance, callback, moduleKey).length > 0 ||
    interceptors.create(instance, callback, moduleKey).length > 0 ||
    pipes.create(instance, callback, moduleKey).length > 0
  ) {
    return undefined;
  }
  // Nest's own reading of the parameter decorators: the same values as through its pipeline.
  const contexts = new RpcContextCreator(
    new RpcProxy(),
    new ExceptionFiltersContext(container, config),
    pipes,
    new PipesConsumer(),
    guards,
    new GuardsConsumer(),
    interceptors,
    new InterceptorsConsumer(),
    config,
  );
  const { argsLength, getParamsMetadata } = contexts.getMetadata(
    instance,
    String(method),
    DEFAULT_CALLBACK_METADATA,
    'rpc',
  );
  const params = getParamsMetadata(moduleKey) as ParamMetadata[];
  if (params.some((param) => param.pipes.length > 0)) return undefined;
  return (data, context) => {
    const args = new Array<unknown>(argsLength);
    for (const param of params) args[param.index] = param.extractValue(data, context);
    return callback.apply(instance, args);
  };
}
