// babelqueue-pulsar replay without a broker: --since and the usage errors (exit code 2).
import { parseSince, runReplayCli } from '../../../lib/cli/replay-cli.js';

describe('parseSince (CLI)', () => {
  it('reads an ISO time or an age before now', () => {
    expect(parseSince('2026-12-02T00:40:00Z', 0)).toBe(Date.parse('2026-12-02T00:40:00Z'));
    expect(parseSince('15m', 1_000_000)).toBe(1_000_000 - 900_000);
    expect(() => parseSince('yesterday', 0)).toThrow(/neither an ISO 8601 time nor an age/);
  });

  it('refuses a day that does not exist instead of rolling it over', () => {
    expect(() => parseSince('2026-02-30T00:00:00Z', 0)).toThrow(/--since "2026-02-30T00:00:00Z" has no such day/);
    expect(() => parseSince('2026-13-01', 0)).toThrow(/no such month/);
    expect(() => parseSince('2026-12-02T25:00:00Z', 0)).toThrow(/no such hour/);
  });
});

describe('babelqueue-pulsar replay (usage)', () => {
  const run = async (...args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runReplayCli(args, { out: (l) => out.push(l), err: (l) => err.push(l) }, {});
    return { code, out: out.join('\n'), err: err.join('\n') };
  };

  it('prints its help with exit code 0, and a usage error with 2', async () => {
    expect(await run('--help')).toMatchObject({
      code: 0,
      out: expect.stringMatching(/^usage: babelqueue-pulsar replay/),
    });
    expect(await run('--topic', 'orders')).toMatchObject({
      code: 2,
      err: expect.stringMatching(/--subscription is required/),
    });
    expect(await run('--topic', 'orders', '--subscription', 's')).toMatchObject({
      code: 2,
      err: expect.stringMatching(/give exactly one of --since and --message-id/),
    });
    expect(await run('--topic', 'o', '--subscription', 's', '--since', '1h', '--yes', '--dry-run')).toMatchObject({
      code: 2,
      err: expect.stringMatching(/--yes and --dry-run contradict each other/),
    });
    expect(await run('--topic', 'o', '--subscription', 's', '--since', '2026-02-30T00:00:00Z')).toMatchObject({
      code: 2,
      err: expect.stringMatching(/--since "2026-02-30T00:00:00Z" has no such day/),
    });
    expect(await run('--topic', 'o', '--subscription', 's', '--message-id', 'nope')).toMatchObject({
      code: 2,
      err: expect.stringMatching(/"nope" is not a message id/),
    });
  });
});
