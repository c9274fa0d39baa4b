#!/usr/bin/env node
// npm run native:setup — makes the native pulsar-client loadable (builds it from source once when needed).
import { ensureNativeClient, NativeSetupError } from './lib/native-client.mjs';

try {
  const { source, seconds, buildDir } = ensureNativeClient();
  const how = {
    installed: 'installed package',
    cache: `cached build in ${buildDir}`,
    built: `new build in ${buildDir}`,
  };
  console.log(`[native] pulsar-client ready: ${how[source]} (${seconds.toFixed(1)} s)`);
} catch (error) {
  console.error(error instanceof NativeSetupError ? `[native] ${error.message}` : error);
  process.exit(1);
}
