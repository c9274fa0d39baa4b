#!/usr/bin/env node
// The `babelqueue-pulsar` command (package.json "bin"): operator tools such as `babelqueue-pulsar redrive`.
import { runCli } from './redrive-command.js';

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`babelqueue-pulsar: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
