// The app the security suites run: one handler that records what it did and fails on request.
import 'reflect-metadata';
import { Controller, Inject, Injectable, Module } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { BabelHandler, BabelQueueModule, type BabelQueueModuleOptions } from '../../../../lib/index.js';
import { rootModule, startMicroservice } from '../../module/support/apps.js';

export const WORK = 'urn:babel:secured:work';

@Injectable()
export class Work {
  readonly done: string[] = [];
  readonly failures: string[] = [];
}

@Controller()
class WorkController {
  constructor(@Inject(Work) private readonly work: Work) {}

  @BabelHandler(WORK)
  handle(@Payload() data: { id: string; fail?: boolean }) {
    if (data.fail) {
      this.work.failures.push(data.id);
      throw new Error(`job ${data.id} failed on purpose`);
    }
    this.work.done.push(data.id);
  }
}

@Module({ providers: [Work], exports: [Work] })
class WorkModule {}

/** Starts the work app with BabelQueueModule.forRoot(options). */
export function startWorkApp(options: BabelQueueModuleOptions) {
  return startMicroservice(
    rootModule({ imports: [WorkModule, BabelQueueModule.forRoot(options)], controllers: [WorkController] }),
  );
}
