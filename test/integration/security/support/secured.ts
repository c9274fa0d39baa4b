// The secured broker (token authentication, authorization, TLS) for the security suites, and a recorder of every
// output the suites can see, so that they can check no secret ever reaches one.
import fs from 'node:fs';
import { inspect } from 'node:util';
import { ensureSecuredBroker, type SecuredBrokerState } from '../../../../scripts/lib/secured-broker.mjs';
import { onNative } from '../../../support/broker.js';

export type { SecuredBrokerState };

/** Starts the secured broker on first use (owned by this test run), or reuses the one that answers. */
export const securedBroker = (): Promise<SecuredBrokerState> =>
  ensureSecuredBroker(process.env.BQ_SECURED_OWNER ?? `jest-${process.ppid}`);

/** The TLS service URL of the client under test: pulsar+ssl:// (native) or https:// (WebSocket). */
export const securedUrl = (broker: SecuredBrokerState): string =>
  onNative() ? broker.serviceUrlTls : broker.webUrlTls;

/** Both clients take the CA as a PEM file path under the same option name. */
export const trust = (caFile: string): Record<string, unknown> => ({
  tlsTrustCertsFilePath: caFile,
  // Fail fast in tests: the native client's own defaults wait 30 s.
  ...(onNative() ? { operationTimeoutSeconds: 8, connectionTimeoutMs: 4000 } : { operationTimeoutMs: 8000 }),
});

export const readToken = (file: string): string => fs.readFileSync(file, 'utf8').trim();

/**
 * Every secret of the broker in the forms it could leak in: each token and its signature, the token keys
 * (base64 and hex) and the first lines of the private keys' PEM bodies.
 */
export function secretsOf(broker: SecuredBrokerState): string[] {
  const secrets: string[] = [];
  for (const file of Object.values(broker.tokens)) {
    const token = readToken(file);
    secrets.push(token, token.split('.')[2]!);
  }
  for (const keyFile of [broker.keyFile, broker.otherKeyFile]) {
    const key = fs.readFileSync(keyFile);
    secrets.push(key.toString('base64'), key.toString('hex'));
  }
  for (const pem of [broker.serverKeyFile, broker.caKeyFile]) {
    const body = fs
      .readFileSync(pem, 'utf8')
      .split('\n')
      .filter((line) => line && !line.startsWith('-----'));
    secrets.push(...body.slice(0, 2));
  }
  return secrets.filter((secret) => secret.length >= 16);
}

/** Collects text from loggers, errors, events, health output and the process's stdout/stderr. */
export class OutputRecorder {
  readonly lines: string[] = [];
  private restore: (() => void) | undefined;

  readonly logger = {
    log: (...args: unknown[]) => this.record('log', args),
    warn: (...args: unknown[]) => this.record('warn', args),
    error: (...args: unknown[]) => this.record('error', args),
    debug: (...args: unknown[]) => this.record('debug', args),
  };

  record(kind: string, values: unknown[]): void {
    // inspect() shows an error's message, stack, cause chain and own properties.
    this.lines.push(
      `${kind}: ${values.map((value) => (typeof value === 'string' ? value : inspect(value, { depth: 8 }))).join(' ')}`,
    );
  }

  /** Also records everything written to stdout and stderr (the native client logs there). */
  captureProcessOutput(): void {
    const stdout = process.stdout.write.bind(process.stdout);
    const stderr = process.stderr.write.bind(process.stderr);
    const tap =
      (kind: string, write: typeof process.stdout.write) =>
      (chunk: unknown, ...rest: unknown[]): boolean => {
        this.lines.push(`${kind}: ${String(chunk)}`);
        return (write as (chunk: unknown, ...rest: unknown[]) => boolean)(chunk, ...rest);
      };
    process.stdout.write = tap('stdout', stdout) as typeof process.stdout.write;
    process.stderr.write = tap('stderr', stderr) as typeof process.stderr.write;
    this.restore = () => {
      process.stdout.write = stdout;
      process.stderr.write = stderr;
    };
  }

  stopCapture(): void {
    this.restore?.();
    this.restore = undefined;
  }

  /** The secrets found in any recorded output (masked, so that a failure does not print them either). */
  leaks(secrets: string[]): string[] {
    const text = this.lines.join('\n');
    return secrets
      .filter((secret) => text.includes(secret))
      .map((secret) => `${secret.slice(0, 4)}…(${secret.length} chars)`);
  }
}
