// Settings of the sample app, from the environment.
export interface SampleConfig {
  /** The broker's web service URL (admin + WebSocket API), or a pulsar:// URL for the native client. */
  serviceUrl: string;
  /** Web URL used to read the dead-letter topic back from the broker. */
  webUrl: string;
  topic: string;
  httpPort: number;
}

const LOCAL_BINARY = 'pulsar://127.0.0.1:6650';
const LOCAL_WEB = 'http://127.0.0.1:8080';

export function loadConfig(env: NodeJS.ProcessEnv = process.env): SampleConfig {
  // http(s)/ws(s) URLs use the built-in WebSocket client; pulsar:// URLs need the native pulsar-client package.
  const serviceUrl = env.PULSAR_SERVICE_URL ?? LOCAL_BINARY;
  return {
    serviceUrl,
    webUrl: env.PULSAR_WEB_URL ?? (/^https?:/.test(serviceUrl) ? serviceUrl : LOCAL_WEB),
    topic: env.ORDERS_TOPIC ?? 'orders',
    httpPort: Number(env.PORT ?? 3000),
  };
}
