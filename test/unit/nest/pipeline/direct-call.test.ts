// Which handler methods are called directly (nothing for Nest's pipeline to run) and with what arguments: Nest's
// own reading of @Payload(), @Ctx() and custom parameter decorators.
import {
  Controller,
  createParamDecorator,
  Injectable,
  Module,
  ParseIntPipe,
  UseFilters,
  UseGuards,
  UseInterceptors,
  UsePipes,
  type CallHandler,
  type CanActivate,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { ModuleRef, NestFactory } from '@nestjs/core';
import { Ctx, Payload } from '@nestjs/microservices';
import { BabelContext } from '../../../../lib/index.js';
import { planDirectCall } from '../../../../lib/nest/pipeline/direct-call.js';
import { containerOf } from '../../../../lib/nest/pipeline/nest-internals.js';

const UrnOf = createParamDecorator((_data: unknown, context: ExecutionContext) =>
  context.switchToRpc().getContext<BabelContext>().getUrn(),
);

@Injectable()
class AllowGuard implements CanActivate {
  canActivate() {
    return true;
  }
}

@Injectable()
class PassInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler) {
    return next.handle();
  }
}

class AnyFilter {
  catch(error: unknown) {
    throw error;
  }
}

@Controller()
class Handlers {
  plain(@Payload() data: unknown, @Ctx() ctx: BabelContext) {
    return { data, urn: ctx.getUrn() };
  }

  field(@Payload('order_id') orderId: number, @UrnOf() urn: string) {
    return { orderId, urn };
  }

  noDecorators(data: unknown) {
    return data;
  }

  @UseFilters(new AnyFilter())
  filtered(@Payload() data: unknown) {
    return data;
  }

  @UseGuards(AllowGuard)
  guarded() {}

  @UseInterceptors(PassInterceptor)
  intercepted() {}

  @UsePipes(ParseIntPipe)
  piped(@Payload() data: unknown) {
    return data;
  }

  paramPiped(@Payload('n', ParseIntPipe) n: number) {
    return n;
  }
}

@Controller()
@UseGuards(AllowGuard)
class GuardedClass {
  handle() {}
}

@Module({ controllers: [Handlers, GuardedClass], providers: [] })
class AppModule {}

const context = new BabelContext([
  { job: 'urn:babel:orders:created' } as never,
  {} as never,
  'orders',
  'urn:babel:orders:created',
]);

async function plan(globalGuard?: CanActivate) {
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  const container = containerOf(app.get(ModuleRef));
  if (globalGuard) container.applicationConfig!.useGlobalGuards(globalGuard);
  const moduleKey = [...container.getModules().entries()].find(([, module]) => module.metatype === AppModule)![0];
  const config = container.applicationConfig!;
  return {
    app,
    of: (owner: new (...args: never[]) => unknown, method: string) =>
      planDirectCall(container, config, moduleKey, { owner, method }),
  };
}

describe('planDirectCall', () => {
  it('calls a method with nothing for the pipeline to run, with Nest’s parameter values', async () => {
    const { app, of } = await plan();
    try {
      expect(await of(Handlers, 'plain')!({ order_id: 7 }, context)).toEqual({
        data: { order_id: 7 },
        urn: 'urn:babel:orders:created',
      });
      expect(await of(Handlers, 'field')!({ order_id: 7 }, context)).toEqual({
        orderId: 7,
        urn: 'urn:babel:orders:created',
      });
      expect(await of(Handlers, 'noDecorators')!({ a: 1 }, context)).toEqual({ a: 1 });
      // An exception filter acts only on a failure: the failure relay consults it for a direct call too.
      expect(of(Handlers, 'filtered')).toBeDefined();
    } finally {
      await app.close();
    }
  });

  it('leaves to Nest’s pipeline a method with a guard, an interceptor or a pipe at any level', async () => {
    const { app, of } = await plan();
    try {
      for (const method of ['guarded', 'intercepted', 'piped', 'paramPiped']) {
        expect({ method, direct: of(Handlers, method) }).toEqual({ method, direct: undefined });
      }
      expect(of(GuardedClass, 'handle')).toBeUndefined();
    } finally {
      await app.close();
    }
  });

  it('leaves every method to the pipeline when the application has a global enhancer', async () => {
    const { app, of } = await plan(new AllowGuard());
    try {
      expect(of(Handlers, 'plain')).toBeUndefined();
    } finally {
      await app.close();
    }
  });
});
