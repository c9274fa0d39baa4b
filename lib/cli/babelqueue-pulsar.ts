#!/usr/bin/env node
// The `babelqueue-pulsar` command (package.json "bin"): operator tools for dead-letter topics, see
// docs/dead-letters.md (list, peek, stats, purge, redrive), and for the outbox's parked rows, see docs/outbox.md
// (outbox parked, outbox requeue).
import { EXIT, runCli } from './run-cli.js';
import { errorText } from '../envelope/error-text.js';
import { escapeControls, withoutUserInfo } from '../text/untrusted-text.js';

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`babelqueue-pulsar: ${escapeControls(withoutUserInfo(errorText(error)))}\n`);
    process.exitCode = EXIT.writeFailed;
  },
);
