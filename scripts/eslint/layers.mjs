// ESLint rule: an import in lib/ goes down the layers, never up (docs/contributing.md#layers). A file's layer is
// its folder under lib/ (for lib/nest, its room); an entry point (index.ts) may re-export from any layer.
import path from 'node:path';

/** Each layer with the layers it builds on; what is not listed is above it. */
export const LAYERS = [
  ['base', []],
  ['envelope', ['base']],
  ['options', ['base', 'envelope']],
  ['pulsar', ['base', 'envelope', 'options']],
  ['consumer', ['base', 'envelope', 'options', 'pulsar']],
  ['schema', ['base', 'envelope', 'options', 'pulsar', 'consumer']],
  ['otel', ['base', 'envelope', 'options', 'pulsar', 'consumer']],
  ['idempotency', ['base', 'envelope', 'options', 'pulsar', 'consumer']],
  ['nest', ['base', 'envelope', 'options', 'pulsar', 'consumer', 'schema', 'otel', 'idempotency']],
  ['redrive', ['base', 'envelope', 'options', 'pulsar', 'consumer', 'schema', 'otel', 'idempotency', 'nest']],
  ['outbox', ['base', 'envelope', 'options', 'pulsar', 'consumer', 'schema', 'otel', 'idempotency', 'nest']],
  [
    'dashboard',
    ['base', 'envelope', 'options', 'pulsar', 'consumer', 'schema', 'otel', 'idempotency', 'nest', 'redrive'],
  ],
  // The module wires every feature into Nest's DI: it sits above the features it provides.
  [
    'nest/module',
    ['base', 'envelope', 'options', 'pulsar', 'consumer', 'schema', 'otel', 'idempotency', 'nest', 'redrive', 'outbox'],
  ],
  [
    'testing',
    ['base', 'envelope', 'options', 'pulsar', 'consumer', 'schema', 'otel', 'idempotency', 'nest', 'nest/module'],
  ],
  [
    'cli',
    [
      'base',
      'envelope',
      'options',
      'pulsar',
      'consumer',
      'schema',
      'otel',
      'idempotency',
      'nest',
      'redrive',
      'outbox',
      'nest/module',
    ],
  ],
];
const allowed = new Map(LAYERS.map(([layer, below]) => [layer, new Set(below)]));

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
      if (layer === own || allowed.get(own)?.has(layer)) return;
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
