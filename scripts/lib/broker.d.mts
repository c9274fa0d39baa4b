// Types of broker.mjs for the TypeScript tests that drive a broker of their own (the chaos project).
export interface BrokerSettings {
  webPort: number;
  brokerPort: number;
  webUrl: string;
  serviceUrl: string;
}
export interface BrokerState {
  pid: number;
  runDir: string;
  logFile: string;
  webUrl: string;
  serviceUrl: string;
}
export function brokerSettings(env?: Record<string, string | undefined>): BrokerSettings;
export function brokerAnswers(webUrl: string): Promise<boolean>;
export function startBroker(settings?: BrokerSettings, options?: { reuse?: BrokerState }): Promise<BrokerState>;
export function stopBroker(settings?: BrokerSettings): Promise<boolean>;
export function restartBroker(
  settings?: BrokerSettings,
  options?: { kill?: boolean; downMs?: number },
): Promise<BrokerState>;
export function ensureBroker(
  env?: Record<string, string | undefined>,
): Promise<{ started: boolean; webUrl: string; serviceUrl: string }>;
export function ensureDistribution(settings?: BrokerSettings): string;
export const PULSAR_VERSION: string;
