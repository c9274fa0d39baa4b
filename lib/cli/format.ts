import type { DeadLetterStats } from '../redrive/browse.js';
import type { DeadLetterView } from '../redrive/dead-letter-view.js';
import type { RedriveItem, RedriveResult } from '../redrive/types.js';
import { escapeControls, escapeControlsExceptLineFeed, quoted } from '../text/untrusted-text.js';

// Every value a record carries (ids, URN, reason, error, properties, body) is written by whoever could publish:
// printed through lib/text's rule, quoted and with control characters escaped, so it cannot move the cursor,
// retitle the terminal or pass for a line of its own. Message ids and counts are the broker's and this tool's.

/** `3d 4h`, `2h 5m`, `7m 12s`, `40s`: the two largest units are enough to tell records apart. */
export function formatAge(ms: number): string {
  const units: [string, number][] = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ];
  const parts: string[] = [];
  let rest = Math.max(0, Math.floor(ms));
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0 || (parts.length > 0 && parts.length < 2)) parts.push(`${n}${unit}`);
    if (parts.length === 2) break;
  }
  return parts.length ? parts.join(' ') : '0s';
}

/** One line per record, `key=value` so it greps well. */
export function recordLine(view: DeadLetterView): string {
  const parts = [view.messageId];
  if (view.id) parts.push(`id=${quoted(view.id)}`);
  parts.push(`urn=${view.urn ? quoted(view.urn) : '-'}`, `reason=${view.reason ? quoted(view.reason) : '-'}`);
  if (view.attempts !== null) parts.push(`attempts=${view.attempts}`);
  parts.push(`age=${formatAge(view.ageMs)}`);
  if (view.consumedTopic) parts.push(`topic=${quoted(view.consumedTopic)}`);
  if (view.originalQueue) parts.push(`from=${quoted(view.originalQueue)}`);
  if (view.exception) parts.push(`exception=${quoted(view.exception)}`);
  if (view.error !== null) parts.push(`error=${quoted(view.error)}`);
  return parts.join(' ');
}

const orDash = (value: string | null): string => (value === null || value === '' ? '-' : quoted(value));

/** Everything about one record, for peek. */
export function recordDetail(view: DeadLetterView): string {
  const lines = [
    `message id:     ${view.messageId}`,
    `meta.id:        ${orDash(view.id)}`,
    `urn:            ${orDash(view.urn)}`,
    `reason:         ${orDash(view.reason)}`,
    `attempts:       ${view.attempts ?? '-'}`,
    `error:          ${orDash(view.error)}`,
    `exception:      ${orDash(view.exception)}`,
    `consumed from:  ${orDash(view.consumedTopic)}`,
    `original queue: ${orDash(view.originalQueue)}`,
    `failed at:      ${new Date(view.failedAt).toISOString()} (${formatAge(view.ageMs)} ago)`,
  ];
  if (view.invalid !== null) lines.push(`not an envelope: ${quoted(view.invalid)}`);
  lines.push('properties:');
  for (const [key, value] of Object.entries(view.properties).sort(([a], [b]) => a.localeCompare(b)))
    lines.push(`  ${quoted(key)}: ${quoted(value)}`);
  // An envelope is JSON: a raw line feed can only be the layout's; DEL, C1 and the rest are escaped. Any other
  // body is one quoted value.
  lines.push('body:', view.invalid === null ? escapeControlsExceptLineFeed(prettyJson(view.body)) : quoted(view.body));
  return lines.join('\n');
}

/** Indented, but with the numbers exactly as written (a reparse would round integers beyond 2^53). */
function prettyJson(text: string): string {
  let out = '';
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    if (c === '}' || c === ']') out += `\n${'  '.repeat(--depth)}`;
    if (!/\s/.test(c)) out += c === ':' ? ': ' : c;
    if (c === '{' || c === '[') out += `\n${'  '.repeat(++depth)}`;
    if (c === ',') out += `\n${'  '.repeat(depth)}`;
  }
  return out;
}

export function statsLines(stats: DeadLetterStats, now: number): string[] {
  const lines = [
    `${stats.topic}: ${stats.total} record(s)${stats.read !== stats.total ? ` selected of ${stats.read}` : ''}`,
  ];
  if (stats.oldestFailedAt !== null) lines.push(`oldest: ${formatAge(now - stats.oldestFailedAt)} ago`);
  const table = (title: string, counts: Record<string, number>) => {
    lines.push(`by ${title}:`);
    for (const [key, n] of Object.entries(counts).sort(([, a], [, b]) => b - a))
      lines.push(`  ${String(n).padStart(6)}  ${quoted(key)}`);
  };
  table('reason', stats.byReason);
  table('urn', stats.byUrn);
  return lines;
}

const LABEL: Record<RedriveItem['outcome'], string> = {
  redriven: 'redriven',
  planned: 'would redrive',
  skipped: 'skipped (selector)',
  kept: 'kept in DLQ',
  refused: 'REFUSED (target not allowed), kept in DLQ',
  failed: 'FAILED',
};

/** One line per redriven record: what happened, which message, where it went. */
export function progressLine(item: RedriveItem): string {
  const parts = [LABEL[item.outcome], `dlq=${item.dlqMessageId}`];
  if (item.id) parts.push(`id=${quoted(item.id)}`);
  if (item.urn) parts.push(`urn=${quoted(item.urn)}`);
  if (item.reason) parts.push(`reason=${quoted(item.reason)}`);
  if (item.to) parts.push(`-> ${quoted(item.to)}`);
  if (item.bypassed) parts.push('(bypass)');
  if (item.restoredAs) parts.push(`(put back as ${item.restoredAs})`);
  // The detail may repeat a value from the record (a target, an error): its control characters are escaped.
  if (item.detail) parts.push(`: ${escapeControls(item.detail)}`);
  return parts.join(' ');
}

export function summaryLine(result: RedriveResult, dryRun: boolean): string {
  const head = dryRun ? 'dry run, nothing published or acknowledged:' : 'done:';
  return (
    `${head} read ${result.read}, redriven ${result.redriven}, would redrive ${result.planned}, ` +
    `skipped ${result.skipped}, kept (unparseable or no queue) ${result.kept}, ` +
    `refused (target not allowed) ${result.refused}, failed ${result.failed}`
  );
}
