// Settings of the sample app, from the environment.
export interface SampleConfig {
  /** The broker's web service URL (admin + WebSocket API), or a pulsar:// URL for the native client. */
  serviceUrl: string;
  /** Web URL used to read the dead-letter topic back from the broker. */
  webUrl: string;
  topic: string;
  httpPort: number;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): SampleConfig {
  const webUrl = env.PULSAR_WEB_URL ?? 'http://127.0.0.1:8080';
  return {
    serviceUrl: env.PULSAR_SERVICE_URL?.startsWith('pulsar') ? env.PULSAR_SERVICE_URL : webUrl,
    webUrl,
    topic: env.ORDERS_TOPIC ?? 'orders',
    httpPort: Number(env.PORT ?? 3000),
  };
}
