// Types for the TypeScript test support that imports scripts/lib/secured-broker.mjs.

/** Where the secured broker listens, and the files that hold its CA and tokens (never the secrets themselves). */
export interface SecuredBrokerState {
  runDir: string;
  secretsDir: string;
  serviceUrl: string;
  serviceUrlTls: string;
  webUrl: string;
  webUrlTls: string;
  caFile: string;
  otherCaFile: string;
  serverKeyFile: string;
  caKeyFile: string;
  keyFile: string;
  otherKeyFile: string;
  pid: number;
  logFile: string;
  owner: string;
  tokens: Record<'admin' | 'websocket' | 'app' | 'limited' | 'expired' | 'forged' | 'rotated', string>;
}

export const ROLES: { admin: string; websocket: string; app: string; limited: string };
export function ensureSecuredBroker(owner: string, env?: NodeJS.ProcessEnv): Promise<SecuredBrokerState>;
export function adminRequest(
  state: SecuredBrokerState,
  method: string,
  apiPath: string,
  body?: unknown,
): Promise<{ status: number; body: string }>;
export function grantNamespace(state: SecuredBrokerState, role: string, actions: string[]): Promise<void>;
export function stopSecuredBroker(settings?: unknown, owner?: string): Promise<boolean>;
