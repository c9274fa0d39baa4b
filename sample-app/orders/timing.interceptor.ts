import { Injectable, Logger, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { BabelContext } from '@babelqueue/nestjs-pulsar';
import { tap, type Observable } from 'rxjs';

/** Logs how long each handler took; shows that Nest interceptors wrap @BabelHandler methods. */
@Injectable()
export class TimingInterceptor implements NestInterceptor {
  private readonly logger = new Logger('Handlers');

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const babel = context.switchToRpc().getContext<BabelContext>();
    const started = Date.now();
    return next
      .handle()
      .pipe(
        tap(() =>
          this.logger.log(
            `${babel.getUrn()} handled in ${Date.now() - started} ms (attempt ${babel.getAttempts() + 1})`,
          ),
        ),
      );
  }
}
