// The layering rule of npm run lint (scripts/eslint/layers.mjs): an import against the order of the layers fails.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';

const root = fileURLToPath(new URL('../../../', import.meta.url));

async function problems(file: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: root });
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return result!.messages.filter((message) => message.ruleId === 'babelqueue/layers').map(({ message }) => message);
}

describe('the layering rule', () => {
  it('refuses an import from a higher layer', async () => {
    expect(await problems('lib/pulsar/example.ts', "export { BabelPulsarServer } from '../nest/index.js';\n")).toEqual([
      'lib/pulsar must not import from lib/nest (a higher layer): ../nest/index.js',
    ]);
    expect(await problems('lib/nest/server/example.ts', "import '../../redrive/index.js';\n")).toEqual([
      'lib/nest must not import from lib/redrive (a higher layer): ../../redrive/index.js',
    ]);
    expect(
      await problems('lib/consumer/example.ts', "export const x = () => import('../outbox/outbox.js');\n"),
    ).toEqual(['lib/consumer must not import from lib/outbox (a higher layer): ../outbox/outbox.js']);
  });

  it('lets an import go down the layers, and the module wire the features', async () => {
    expect(await problems('lib/nest/server/example.ts', "export * from '../../consumer/index.js';\n")).toEqual([]);
    expect(await problems('lib/nest/module/example.ts', "export * from '../../outbox/index.js';\n")).toEqual([]);
    expect(await problems('lib/idempotency/index.ts', "export * from '../nest/index.js';\n")).toEqual([]);
  });
});
