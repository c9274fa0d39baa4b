export function chromiumPath(env?: NodeJS.ProcessEnv): string | null;
export function ensureChromium(env?: NodeJS.ProcessEnv): string;
