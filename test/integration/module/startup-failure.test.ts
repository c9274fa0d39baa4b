// A start that fails, as a user sees it: the README's own src/main.ts (quick start, hybrid app, default
// brokerAtStart 'required') run as a process against a wrong or absent broker. Each mistake is one Nest ERROR line
// naming the URL, the client and the likely cause; no unhandled rejection (with its compiled source line) and
// exit code 1, as Nest ends a failed bootstrap. The process runs on the client its URL selects, whichever client
// this suite runs on.
import { jest } from '@jest/globals';
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { fileURLToPath } from 'node:url';
import { nativeServiceUrl, uniqueTopic } from '../../support/broker.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const main = path.join(root, 'test/integration/module/readme-snippets/main.ts');

/** A port nothing listens on: taken from the system, then released. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Ended {
  code: number | null;
  lines: string[];
  /** From the first line the app printed to its last, ms (the start-up itself, not Node's or the compiler's). */
  failedAfterMs: number;
}

function runMain(pulsarUrl: string): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', './scripts/lib/ts/register.mjs', main], {
      cwd: root,
      env: { ...process.env, PULSAR_URL: pulsarUrl, ORDERS_TOPIC: uniqueTopic('start-failure'), PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let first = 0;
    let last = 0;
    const keep = (chunk: Buffer) => {
      last = Date.now();
      first ||= last;
      output += chunk.toString();
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`main.ts with ${pulsarUrl} did not end within 60 s:\n${output}`));
    }, 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const lines = stripVTControlCharacters(output)
        .split('\n')
        .filter((line) => line.trim() !== '');
      resolve({ code, lines, failedAfterMs: last - first });
    });
  });
}

function expectOneErrorLine(ended: Ended, ...expected: RegExp[]): void {
  const errors = ended.lines.filter((line) => /\bERROR\b/.test(line));
  expect(errors).toHaveLength(1);
  for (const pattern of expected) expect(errors[0]).toMatch(pattern);
  // Every line is one of Nest's: no unhandled rejection, no stack, no compiled source line.
  expect(ended.lines.filter((line) => !line.startsWith('[Nest] '))).toEqual([]);
  expect(ended.code).toBe(1);
  console.log(`${errors[0]}\n(failed ${ended.failedAfterMs} ms after the app's first line)`);
}

describe('a failed start of the README app', () => {
  jest.setTimeout(90_000);

  it('http:// where nothing listens: the WebSocket client, the URL, nothing listens there', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    expectOneErrorLine(
      await runMain(url),
      new RegExp(`BabelPulsarServer could not start \\(${url}, built-in WebSocket client\\)`),
      /nothing listens at 127\.0\.0\.1:\d+ \(connection refused\)/,
    );
  });

  it("http:// to the broker's binary port: says it is the binary port", async () => {
    const { hostname, port } = new URL(nativeServiceUrl());
    const url = `http://${hostname}:${port}`;
    expectOneErrorLine(
      await runMain(url),
      new RegExp(`could not start \\(${url}, built-in WebSocket client\\)`),
      /is that Pulsar's binary port\? The WebSocket client needs the web service port/,
    );
  });

  it('pulsar:// with the broker down (nothing listens): at once, not after the native time-out', async () => {
    const url = `pulsar://127.0.0.1:${await freePort()}`;
    const ended = await runMain(url);
    expectOneErrorLine(
      ended,
      new RegExp(`could not start \\(${url}, native pulsar-client\\)`),
      /nothing listens at 127\.0\.0\.1:\d+ \(connection refused\)/,
    );
    // Told by the connection check, not by the native client's operation time-out.
    expect(ended.lines.join('\n')).not.toMatch(/TimeOut/);
  });
});
