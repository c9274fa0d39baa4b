// ESLint rule: an import in lib/ goes down the layers, never up (docs/contributing.md#layers). A file's layer is
// its folder under lib/ (for lib/nest, its room). The package's published entry points (package.json "exports":
// lib/index.ts, lib/idempotency/index.ts, …) are its faces and may re-export from any layer; every other index.ts
// is held to its folder's layer (lib/nest/index.ts to nest's top room).
import fs from 'node:fs';
import path from 'node:path';

/** The lib/ files package.json publishes as entry points (their dist paths mapped back to lib/). */
const entriesByRoot = new Map();
function publishedEntries(cwd) {
  if (entriesByRoot.has(cwd)) return entriesByRoot.get(cwd);
  const manifest = JSON.parse(fs.readFileSync(path.join(cwd, 'package.json'), 'utf8'));
  const entries = new Set();
  for (const target of Object.values(manifest.exports ?? {})) {
    const found = JSON.stringify(target).match(/dist\/esm\/([^"]+)\.js/);
    if (found) entries.add(path.join(cwd, 'lib', `${found[1]}.ts`));
  }
  entriesByRoot.set(cwd, entries);
  return entries;
}

/**
 * The layers from the bottom up; a layer builds on every layer before it, never on one after it or on another
 * folder of its own step.
 */
export const LAYERS = [
  ['base', 'text'],
  ['envelope'],
  ['options'],
  ['pulsar'],
  ['consumer'],
  ['schema', 'otel', 'idempotency'],
  // The inbox runs a handler in a transaction (it builds on the idempotency stores' SQL helpers); scheduling's pure
  // parts (options, cron ticks, the missed-tick policy) are what the client and the outbox build on.
  ['inbox', 'schedule'],
  // Nest's rooms, from what all of them share to the transport itself: the option tables (decorator, `handlers`
  // configuration and server read the same rows), the handler's contexts, the pipeline around a handler call, the
  // decorators, the client (the server's retry and dead-letter producers are a client's), the server.
  ['nest'],
  ['nest/options'],
  ['nest/context'],
  ['nest/pipeline'],
  ['nest/handler'],
  ['nest/client'],
  ['nest/server'],
  ['redrive', 'outbox', 'replay'],
  ['dashboard'],
  // The module wires every feature into Nest's DI: it sits above the features it provides.
  ['nest/module'],
  ['testing', 'cli'],
];
const stepOf = new Map(LAYERS.flatMap((layers, step) => layers.map((layer) => [layer, step])));
const builtOn = (own, layer) => (stepOf.get(layer) ?? Infinity) < (stepOf.get(own) ?? -1);

/** The layer of a file below lib/ (its path relative to lib/, with forward slashes). */
export function layerOf(relative) {
  const [first, second] = relative.split('/');
  if (second === undefined) return 'base';
  if (first === 'nest' && /^index\.[cm]?[jt]s$/.test(second)) return 'nest/module';
  if (first === 'nest' && !/\.[cm]?[jt]s$/.test(second)) return `nest/${second}`;
  return first;
}

export const layersRule = {
  meta: {
    type: 'problem',
    docs: { description: 'imports in lib/ follow the layers: envelope → options → pulsar → consumer → … → cli' },
    schema: [],
  },
  create(context) {
    const file = context.filename ?? context.getFilename();
    const cwd = context.cwd ?? process.cwd();
    const lib = path.join(cwd, 'lib') + path.sep;
    if (!file.startsWith(lib) || publishedEntries(cwd).has(file)) return {};
    const own = layerOf(path.relative(lib, file).split(path.sep).join('/'));
    const check = (node, source) => {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = path.resolve(path.dirname(file), source);
      if (!target.startsWith(lib)) return;
      const layer = layerOf(path.relative(lib, target).split(path.sep).join('/'));
      if (layer === own || builtOn(own, layer)) return;
      context.report({
        node,
        message: `lib/${own === 'base' ? '' : own} must not import from lib/${layer} (a higher layer): ${source}`,
      });
    };
    return {
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
    };
  },
};
