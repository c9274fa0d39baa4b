// Jest runs the TypeScript sources as native ESM (Nest 12 is ESM-only), transformed by SWC.
const swc = [
  '@swc/jest',
  {
    jsc: {
      target: 'es2022',
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      keepClassNames: true,
    },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  },
];

const project = (name, extra = {}) => ({
  displayName: name,
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: [`<rootDir>/test/${name}/**/*.test.ts`],
  ...extra,
});

export default {
  projects: [
    project('unit'),
    project('conformance'),
    project('integration', {
      globalSetup: '<rootDir>/test/support/global-setup.mjs',
      globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
    }),
    // Kills and restarts a broker of its own on other ports (test/chaos/support/global-setup.mjs).
    project('chaos', {
      globalSetup: '<rootDir>/test/chaos/support/global-setup.mjs',
      globalTeardown: '<rootDir>/test/chaos/support/global-teardown.mjs',
    }),
    project('interop', {
      globalSetup: '<rootDir>/test/support/global-setup.mjs',
      globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
    }),
  ],
};
