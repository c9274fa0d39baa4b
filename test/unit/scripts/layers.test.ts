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
      'lib/pulsar must not import from lib/nest/module (a higher layer): ../nest/index.js',
    ]);
    expect(await problems('lib/nest/server/example.ts', "import '../../redrive/index.js';\n")).toEqual([
      'lib/nest/server must not import from lib/redrive (a higher layer): ../../redrive/index.js',
    ]);
    expect(
      await problems('lib/consumer/example.ts', "export const x = () => import('../outbox/outbox.js');\n"),
    ).toEqual(['lib/consumer must not import from lib/outbox (a higher layer): ../outbox/outbox.js']);
  });

  it("orders nest's rooms: options, context, pipeline, handler, client, server", async () => {
    expect(await problems('lib/nest/client/example.ts', "import '../server/server-options.js';\n")).toEqual([
      'lib/nest/client must not import from lib/nest/server (a higher layer): ../server/server-options.js',
    ]);
    expect(await problems('lib/nest/pipeline/example.ts', "import '../handler/babel-handler.decorator.js';\n")).toEqual(
      [
        'lib/nest/pipeline must not import from lib/nest/handler (a higher layer): ../handler/babel-handler.decorator.js',
      ],
    );
    expect(await problems('lib/nest/options/example.ts', "import '../context/babel.context.js';\n")).toEqual([
      'lib/nest/options must not import from lib/nest/context (a higher layer): ../context/babel.context.js',
    ]);
    expect(await problems('lib/nest/handler/example.ts', "import '../pipeline/failure-relay.js';\n")).toEqual([]);
    expect(await problems('lib/nest/server/example.ts', "import '../client/producer-settings.js';\n")).toEqual([]);
  });

  it('holds a folder index to its folder, but lets a published entry point gather', async () => {
    expect(await problems('lib/options/index.ts', "export * from '../nest/index.js';\n")).toEqual([
      'lib/options must not import from lib/nest/module (a higher layer): ../nest/index.js',
    ]);
    expect(await problems('lib/idempotency/index.ts', "export * from '../nest/index.js';\n")).toEqual([]);
  });

  it('lets an import go down the layers, and the module wire the features', async () => {
    expect(await problems('lib/nest/server/example.ts', "export * from '../../consumer/index.js';\n")).toEqual([]);
    expect(await problems('lib/nest/module/example.ts', "export * from '../../outbox/index.js';\n")).toEqual([]);
  });
});
