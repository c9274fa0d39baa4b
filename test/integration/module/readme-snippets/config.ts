// Test stand-in for @nestjs/config (not installed here): the same ConfigModule / ConfigService surface the
// forRootAsync snippet uses. Not part of the README.
import { Injectable, Module, type DynamicModule } from '@nestjs/common';

@Injectable()
export class ConfigService {
  get<T = string>(key: string, defaultValue?: T): T | undefined {
    return (process.env[key] as T | undefined) ?? defaultValue;
  }

  getOrThrow<T = string>(key: string): T {
    const value = process.env[key];
    if (value === undefined) throw new TypeError(`Configuration key "${key}" does not exist`);
    return value as T;
  }
}

@Module({ providers: [ConfigService], exports: [ConfigService] })
export class ConfigModule {
  static forRoot(): DynamicModule {
    return { module: ConfigModule, global: true, providers: [ConfigService], exports: [ConfigService] };
  }
}
