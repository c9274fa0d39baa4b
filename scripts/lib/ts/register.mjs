// node --import ./scripts/lib/ts/register.mjs app.ts: runs TypeScript sources through hooks.mjs.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
