// Module hooks that let Node run this repository's TypeScript sources as they are, for child processes that
// tests and the demo start (an app instance per process) without building dist/. The same SWC settings as
// jest.config.mjs: legacy decorators with metadata, as Nest needs.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { transform } from '@swc/core';

const SWC_OPTIONS = {
  jsc: {
    target: 'es2022',
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    keepClassNames: true,
  },
  module: { type: 'es6' },
  sourceMaps: 'inline',
};

/** `./x.js` imported from a .ts file means `./x.ts` (NodeNext style); everything else resolves as usual. */
export async function resolve(specifier, context, nextResolve) {
  const fromTs = context.parentURL?.endsWith('.ts');
  const isPath = specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('file:');
  if (fromTs && isPath && specifier.endsWith('.js')) {
    const candidate = new URL(specifier.replace(/\.js$/, '.ts'), context.parentURL);
    if (fs.existsSync(fileURLToPath(candidate))) return { url: candidate.href, format: 'module', shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const filename = fileURLToPath(url);
  const { code } = await transform(await fs.promises.readFile(filename, 'utf8'), { ...SWC_OPTIONS, filename });
  return { format: 'module', source: code, shortCircuit: true };
}
