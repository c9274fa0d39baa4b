import type { FoundPattern } from './startup-scan.js';

const label = (name: string | undefined): string => (name === undefined ? 'unnamed' : `'${name}'`);

/**
 * What is wrong with the application's wiring that Nest itself would pass over in silence, one line each:
 * @BabelHandler methods on providers (Nest binds handlers only on controllers), several unnamed registrations
 * (only one of each export is reachable) and handlers bound to a registration name that does not exist.
 */
export function wiringWarnings(
  patterns: readonly FoundPattern[],
  registrations: ReadonlyArray<string | undefined>,
): string[] {
  const warnings: string[] = [];
  for (const found of patterns) {
    if (found.role !== 'provider' || !found.babel) continue;
    warnings.push(
      `${found.where} has @BabelHandler('${found.pattern}'), but its class is a provider, not a controller: Nest binds ` +
        'message handlers on controllers only, so this method never runs and its messages are dead-lettered as ' +
        "unknown_urn. Move the method to a class listed in a module's controllers (it can call the provider).",
    );
  }
  const unnamed = registrations.filter((name) => name === undefined).length;
  if (unnamed > 1) {
    warnings.push(
      `BabelQueueModule.forRoot is registered ${unnamed} times without a name: they export BabelPulsarClient and ` +
        'BabelPulsarServer under the same tokens, so only one of each is reachable and only the server you connect ' +
        'consumes. Consume several topics with consumer.topics or @BabelHandler(urn, { topic }); for another cluster ' +
        "or other settings, name the registration: forRoot({ name: 'billing', ... }), @InjectBabelClient('billing'), " +
        "@BabelHandler(urn, { connection: 'billing' }).",
    );
  }
  const known = new Set(registrations);
  const missing = new Map<string, string[]>();
  for (const found of patterns) {
    const connection = found.babel?.connection;
    if (found.role !== 'controller' || connection === undefined || known.has(connection)) continue;
    missing.set(connection, [...(missing.get(connection) ?? []), found.where]);
  }
  for (const [connection, where] of missing) {
    warnings.push(
      `${where.join(', ')} ${where.length === 1 ? 'is' : 'are'} bound to connection '${connection}', but no ` +
        `BabelQueueModule.forRoot({ name: '${connection}' }) is registered (registered: ` +
        `${[...known].map(label).join(', ') || 'none'}): nothing consumes ${where.length === 1 ? 'it' : 'them'}.`,
    );
  }
  return warnings;
}

/** The @BabelHandler controller methods a registration's server runs. */
export function handlersOf(patterns: readonly FoundPattern[], name: string | undefined): FoundPattern[] {
  return patterns.filter((found) => found.role === 'controller' && found.babel && found.babel.connection === name);
}

/** The line for a registration whose server has handlers but was never started. */
export function notStartedWarning(
  name: string | undefined,
  handlers: readonly FoundPattern[],
  afterMs: number,
): string {
  const token = name === undefined ? 'BabelPulsarServer' : `getBabelServerToken('${name}')`;
  return (
    `BabelQueueModule (${label(name)}) has ${handlers.length} @BabelHandler method(s) (${handlers
      .slice(0, 3)
      .map((found) => found.where)
      .join(
        ', ',
      )}${handlers.length > 3 ? ', …' : ''}) but its server was not started ${Math.round(afterMs / 100) / 10} s ` +
    `after the application started: nothing is consumed. Start it: app.connectMicroservice({ strategy: ` +
    `app.get(${token}) }) then await app.startAllMicroservices(), or pass it as the strategy of ` +
    'NestFactory.createMicroservice.'
  );
}
