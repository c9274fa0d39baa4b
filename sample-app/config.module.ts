import { Global, Module } from '@nestjs/common';
import { loadConfig } from './config.js';
import { SAMPLE_CONFIG } from './tokens.js';

/** Environment-backed settings, injectable anywhere (a stand-in for @nestjs/config). */
@Global()
@Module({ providers: [{ provide: SAMPLE_CONFIG, useFactory: () => loadConfig() }], exports: [SAMPLE_CONFIG] })
export class SampleConfigModule {}
