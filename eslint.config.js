import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { layersRule } from './scripts/eslint/layers.mjs';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'dist-sample/',
      'node_modules/',
      'coverage/',
      'test-results/',
      'test/conformance/vendor/',
      'test/interop/peers/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        URL: 'readonly',
        fetch: 'readonly',
        AbortSignal: 'readonly',
        AbortController: 'readonly',
        TextDecoder: 'readonly',
        TextEncoder: 'readonly',
        globalThis: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['lib/**/*.ts'],
    plugins: { babelqueue: { rules: { layers: layersRule } } },
    rules: { '@typescript-eslint/no-explicit-any': 'error', 'babelqueue/layers': 'error' },
  },
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
