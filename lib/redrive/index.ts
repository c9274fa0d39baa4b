export { BabelQueueRedrive } from './babel-queue-redrive.js';
export { DEFAULT_REDRIVE_SUBSCRIPTION, redrive } from './redrive.js';
export { resetForRedrive, sourceQueueOf } from './reset.js';
export { bypassExternalEffects, isReplay, REPLAY_BYPASS_VALUE } from './replay.js';
export type { RedriveCandidate, RedriveItem, RedriveOptions, RedriveOutcome, RedriveResult } from './types.js';
