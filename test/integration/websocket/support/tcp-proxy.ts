/**
 * A tiny TCP forwarder in front of the broker's web port, so tests can cut live WebSocket connections
 * (dropAll), refuse new ones for a while (pause/resume) or black-hole traffic (freeze/thaw).
 */
import net from 'node:net';

export class TcpProxy {
  private server: net.Server | undefined;
  private readonly pairs = new Set<[net.Socket, net.Socket]>();
  private paused = false;
  private frozen = false;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get connectionCount(): number {
    return this.pairs.size;
  }

  async start(): Promise<void> {
    this.server = net.createServer((client) => {
      if (this.paused) {
        client.destroy();
        return;
      }
      const upstream = net.connect(this.targetPort, this.targetHost);
      const pair: [net.Socket, net.Socket] = [client, upstream];
      this.pairs.add(pair);
      const end = (): void => {
        client.destroy();
        upstream.destroy();
        this.pairs.delete(pair);
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
      client.on('data', (chunk: Buffer) => {
        if (!this.frozen) upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        if (!this.frozen) client.write(chunk);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  /** Destroy every forwarded connection (both sides see an abrupt close). */
  dropAll(): void {
    for (const [client, upstream] of [...this.pairs]) {
      client.destroy();
      upstream.destroy();
    }
    this.pairs.clear();
  }

  /** New connections are accepted and immediately destroyed until resume(). */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
  }

  /** Silently discard all traffic in both directions (connections stay open) until thaw(). */
  freeze(): void {
    this.frozen = true;
  }

  thaw(): void {
    this.frozen = false;
  }

  async stop(): Promise<void> {
    this.dropAll();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
