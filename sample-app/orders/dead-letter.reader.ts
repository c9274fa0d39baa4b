import { Injectable } from '@nestjs/common';
import WebSocket from 'ws';

export interface DeadLetterView {
  messageId: string;
  properties: Record<string, string>;
  /** The decoded record when the payload is JSON (failed / unknown_urn), else null (poison bytes). */
  body: Record<string, unknown> | null;
  /** The payload as base64, byte-exact. */
  payload: string;
}

/**
 * Reads a dead-letter topic from the broker, from its first message, with Pulsar's WebSocket reader API:
 * nothing is consumed or acknowledged on a subscription, so every call sees the whole topic.
 */
@Injectable()
export class DeadLetterReader {
  async read(webUrl: string, topic: string, idleMs = 400): Promise<DeadLetterView[]> {
    const path = `persistent/public/default/${encodeURIComponent(topic)}`;
    const url = `${webUrl.replace(/^http/, 'ws')}/ws/v2/reader/${path}?messageId=earliest`;
    const socket = new WebSocket(url);
    const records: DeadLetterView[] = [];
    return new Promise((resolve, reject) => {
      let idle: NodeJS.Timeout | undefined;
      const finish = () => {
        clearTimeout(idle);
        socket.close();
        resolve(records);
      };
      const arm = () => {
        clearTimeout(idle);
        idle = setTimeout(finish, idleMs);
      };
      socket.once('open', arm);
      socket.once('error', reject);
      socket.once('unexpected-response', (_request, response) =>
        reject(new Error(`reader: HTTP ${response.statusCode}`)),
      );
      socket.on('message', (raw) => {
        const frame = JSON.parse(String(raw)) as {
          messageId: string;
          payload: string;
          properties?: Record<string, string>;
        };
        // Readers take the same frame as an acknowledgement purely as flow control.
        socket.send(JSON.stringify({ messageId: frame.messageId }));
        records.push({
          messageId: frame.messageId,
          properties: frame.properties ?? {},
          body: parseJson(frame.payload),
          payload: frame.payload,
        });
        arm();
      });
    });
  }
}

function parseJson(base64: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(base64, 'base64')));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}
