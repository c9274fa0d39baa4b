// node --import ./test/unit/nest/without-native/hide-pulsar-client.mjs: a process where pulsar-client is not
// installed (its import fails as Node fails it), in a repository where it is.
import { register } from 'node:module';

register('./hide-pulsar-client-hooks.mjs', import.meta.url);
