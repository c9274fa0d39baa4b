// ESLint rule: an import in lib/ goes down the layers, never up (docs/contributing.md#layers). A file's layer is
// its folder under lib/ (for lib/nest, its room); an entry point (index.ts) may re-export from any layer.
import path from 'node:path';

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
  ['nest'],
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
  if (first === 'nest' && second === 'module') return 'nest/module';
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
    const lib = path.join(context.cwd ?? process.cwd(), 'lib') + path.sep;
    if (!file.startsWith(lib) || path.basename(file) === 'index.ts') return {};
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
