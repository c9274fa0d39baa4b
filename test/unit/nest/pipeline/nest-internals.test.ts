// The one Nest field the library reads outside Nest's typed API (ModuleRef's container), pinned on the Nest
// version installed here; the Nest 11 compatibility suite pins it there through the failure relay.
import { Inject, Injectable, Module } from '@nestjs/common';
import { ModuleRef, NestFactory } from '@nestjs/core';
import { containerOf } from '../../../../lib/nest/pipeline/nest-internals.js';

@Injectable()
class NeedsModuleRef {
  constructor(@Inject(ModuleRef) readonly moduleRef: ModuleRef) {}
}

@Module({ providers: [NeedsModuleRef] })
class AppModule {}

describe('containerOf', () => {
  it('finds the container (modules and application config) behind a ModuleRef', async () => {
    const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    try {
      const container = containerOf(app.get(NeedsModuleRef).moduleRef);
      expect([...container.getModules().values()].some((module) => module.metatype === AppModule)).toBe(true);
      expect(typeof container.applicationConfig?.getGlobalFilters).toBe('function');
    } finally {
      await app.close();
    }
  });

  it('says which Nest it cannot work with instead of failing later', () => {
    expect(() => containerOf({} as ModuleRef)).toThrow(/keeps no container on ModuleRef/);
  });
});
