// What the instance programs of the multi-process runs (instance.ts, schedule-instance.ts) share: their settings
// from the environment and the start as users start a microservice (records are JSON lines on stdout).
import type { Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BabelPulsarServer } from '../../../lib/index.js';

/** A setting of the instance, from the environment; throws when a required one is missing. */
export const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};

export const silentLogger = { log() {}, warn() {}, error() {}, debug() {} };

/**
 * Starts `module` as a microservice with the module's server as its strategy, closing on SIGTERM (Nest drains
 * and closes, then the process ends), and reports `ready()` once it listens. A start that fails exits with 1.
 */
export function runInstance(module: Type, ready: () => object): void {
  const main = async () => {
    const app = await NestFactory.createMicroservice(module, {
      inject: [BabelPulsarServer],
      useFactory: (server: BabelPulsarServer) => ({ strategy: server }),
      logger: false,
    });
    app.enableShutdownHooks();
    await app.listen();
    process.stdout.write(`${JSON.stringify(ready())}\n`);
  };
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
