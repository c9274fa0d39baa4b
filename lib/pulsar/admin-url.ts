/**
 * The broker's admin (web service) URL for a service URL: the WebSocket client's own URL, or for the native
 * client's `pulsar://host:6650` the same host on the web port (8080, or 8443 for `pulsar+ssl://`).
 */
export function adminUrlFor(serviceUrl: string): string {
  const url = new URL(serviceUrl);
  switch (url.protocol) {
    case 'http:':
    case 'https:':
      return `${url.protocol}//${url.host}`;
    case 'ws:':
      return `http://${url.host}`;
    case 'wss:':
      return `https://${url.host}`;
    case 'pulsar+ssl:':
      return `https://${url.hostname}:8443`;
    default:
      return `http://${url.hostname}:8080`;
  }
}
