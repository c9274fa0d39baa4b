// The published typings of the native pulsar-client satisfy our structural client interfaces
// (runs scripts/check-native-types.mjs: npm pack of pulsar-client, cached under ~/.cache, then tsc).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../../../scripts/check-native-types.mjs', import.meta.url));

describe('pulsar-client typings', () => {
  it('fit PulsarClientLike, PulsarProducer, PulsarConsumer, PulsarMessage and the factory', () => {
    const run = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 170_000 });
    const output = `${run.stdout}${run.stderr}`;
    if (run.status !== 0) throw new Error(`type check failed (exit ${run.status}):\n${output}`);
    expect(output).toMatch(/types satisfy/);
  }, 180_000);
});
