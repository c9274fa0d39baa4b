// Test stand-in for @nestjs/terminus (not installed here): the HealthCheck / HealthCheckService surface the health
// snippet uses. Not part of the docs.
import { Injectable } from '@nestjs/common';

export const HealthCheck = (): MethodDecorator => () => undefined;

@Injectable()
export class HealthCheckService {
  async check(indicators: Array<() => unknown>): Promise<unknown[]> {
    return Promise.all(indicators.map((indicator) => indicator()));
  }
}
