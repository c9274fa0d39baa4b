// Resolving pulsar-client fails with the error Node gives for a package that is not installed.
export async function resolve(specifier, context, nextResolve) {
  if (specifier === 'pulsar-client' || specifier.startsWith('pulsar-client/')) {
    const error = new Error(`Cannot find package 'pulsar-client' imported from ${context.parentURL}`);
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return nextResolve(specifier, context);
}
