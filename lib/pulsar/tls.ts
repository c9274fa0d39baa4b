/**
 * TLS settings both clients share, and errors that name what failed in a TLS handshake. The defaults and the
 * options are described in docs/security.md.
 */
import net from 'node:net';
import tls from 'node:tls';

/** The TLS options both clients take, under the native client's names and with the same defaults. */
export interface TlsOptions {
  /** PEM file of the CA(s) that signed the broker's certificate. Default: the platform's trust store. */
  tlsTrustCertsFilePath?: string;
  /**
   * Check that the broker's certificate is issued for the host name in the service URL. Default true. Turning it
   * off lets anyone with a certificate from a trusted CA pose as the broker (and receive the token); it logs a warning.
   */
  tlsValidateHostname?: boolean;
  /**
   * Accept any certificate, trusted or not, expired or not (no verification at all, hostname included). Default
   * false; only for development; it logs a warning.
   */
  tlsAllowInsecureConnection?: boolean;
}

/** What the TLS options amount to, checked. */
export interface ResolvedTls {
  validateHostname: boolean;
  allowInsecure: boolean;
}

/** Checks the two switches (a string "false" must not read as true) and returns the warnings they call for. */
export function resolveTls(options: Partial<Record<keyof TlsOptions, unknown>>): ResolvedTls & { warnings: string[] } {
  const flag = (name: keyof TlsOptions, fallback: boolean): boolean => {
    const value = options[name];
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean') throw new TypeError(`${name} must be true or false, got ${JSON.stringify(value)}`);
    return value;
  };
  const validateHostname = flag('tlsValidateHostname', true);
  const allowInsecure = flag('tlsAllowInsecureConnection', false);
  const warnings: string[] = [];
  if (allowInsecure) {
    warnings.push(
      "tlsAllowInsecureConnection is true: the broker's TLS certificate is not verified at all, so anyone on the " +
        'network path can pose as the broker and read the token and the messages. Use it for development only',
    );
  } else if (!validateHostname) {
    warnings.push(
      "tlsValidateHostname is false: the broker's certificate is not checked against the host name, so anyone " +
        'holding a certificate from a trusted CA can pose as the broker and read the token and the messages',
    );
  }
  return { validateHostname, allowInsecure, warnings };
}

const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
]);

/**
 * What a TLS error from Node (its `code`, an OpenSSL verify code or ERR_TLS_CERT_ALTNAME_INVALID) means, in words a
 * user can act on; undefined for an error that is not a certificate check.
 */
export function describeTlsError(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return undefined;
  const detail = error instanceof Error ? ` (${error.message})` : '';
  if (UNTRUSTED.has(code)) {
    return (
      `TLS: the broker's certificate is not signed by a trusted CA${detail}; ` +
      'give the CA that signed it with tlsTrustCertsFilePath'
    );
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return (
      `TLS: hostname mismatch, the broker's certificate is not issued for the host in the service URL${detail}; ` +
      'connect by a name the certificate carries'
    );
  }
  if (code === 'CERT_HAS_EXPIRED') return `TLS: the broker's certificate has expired${detail}`;
  if (code === 'CERT_NOT_YET_VALID') return `TLS: the broker's certificate is not valid yet${detail}`;
  if (code.startsWith('ERR_SSL_') || code === 'EPROTO') return `TLS handshake failed${detail}`;
  return undefined;
}

export interface TlsProbeTarget {
  host: string;
  port: number;
  ca?: string | Buffer | Array<string | Buffer>;
  validateHostname: boolean;
  timeoutMs?: number;
}

/**
 * Makes one TLS handshake with the broker, checking its certificate as the client would, and says what is wrong
 * with it (undefined: nothing, or the broker did not answer). The native client reports a failed handshake only as
 * `ConnectError`; this names the reason.
 */
export function probeTls(target: TlsProbeTarget): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = tls.connect({
      host: target.host,
      port: target.port,
      ...(target.ca !== undefined && { ca: target.ca }),
      ...(net.isIP(target.host) === 0 && { servername: target.host }),
      ...(!target.validateHostname && { checkServerIdentity: () => undefined }),
    });
    const finish = (answer: string | undefined): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => finish(undefined), target.timeoutMs ?? 3000);
    timer.unref();
    socket.once('secureConnect', () => finish(undefined));
    socket.once('error', (error) => finish(describeTlsError(error)));
  });
}

/** The first `host:port` of a service URL (the native client takes `scheme://a:1,b:2`). */
export function firstHostPort(serviceUrl: string, defaultPort: number): { host: string; port: number } | undefined {
  const match = /^[a-z+]+:\/\/(\[[^\]]+\]|[^:/,]+)(?::(\d+))?/i.exec(serviceUrl.trim());
  if (!match?.[1]) return undefined;
  return { host: match[1].replace(/^\[|\]$/g, ''), port: match[2] ? Number(match[2]) : defaultPort };
}
