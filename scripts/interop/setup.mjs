#!/usr/bin/env node
// Prepares every interop peer (or the ones named): the Python venv and the Go peer binary, both cached
// outside the clone. Handy as a separate CI step (cache ~/.cache/babelqueue-nestjs-pulsar/interop,
// ~/.cache/pip, $(go env GOMODCACHE) and $(go env GOCACHE)). The Jest suite runs the same setup itself.
//
//   node scripts/interop/setup.mjs [python] [go] [java]
//
// Exit status 1 when a peer cannot be prepared (the message names the step that failed).
import { ensureGoPeer } from './setup-go.mjs';
import { ensureJavaPeer } from './setup-java.mjs';
import { ensurePythonPeer } from './setup-python.mjs';

const setups = { python: ensurePythonPeer, go: ensureGoPeer, java: ensureJavaPeer };
const named = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const wanted = named.length ? named : Object.keys(setups);

let failed = false;
for (const sdk of wanted) {
  if (!setups[sdk]) {
    console.error(`unknown peer "${sdk}" (known: ${Object.keys(setups).join(', ')})`);
    process.exit(2);
  }
  const started = Date.now();
  try {
    const peer = await setups[sdk]();
    console.log(
      `${sdk}: ready in ${Date.now() - started} ms${peer.cached ? ' (cached)' : ''} — ${JSON.stringify(peer.versions)}`,
    );
  } catch (error) {
    console.error(`${sdk}: FAILED (${error.code ?? 'error'}): ${error.message}`);
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
