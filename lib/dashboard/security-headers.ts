/**
 * The headers of every dashboard response (pure). The page and its API show message bodies (personal data, say),
 * so nothing is cached; nothing is sniffed into another type; and the page is never framed (clickjacking), unless
 * `frameAncestors` names who may.
 */
export function securityHeaders(frameAncestors: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
  };
  // A CSP for the API answers too: a JSON body opened as a document runs nothing and cannot be framed.
  headers['content-security-policy'] = `default-src 'none'; frame-ancestors ${frameAncestors ?? "'none'"}`;
  if (frameAncestors === undefined || frameAncestors.trim() === "'none'") headers['x-frame-options'] = 'DENY';
  return headers;
}

/** True for a JSON request body (`application/json`, with or without parameters). */
export function requireJson(contentType: string | undefined): boolean {
  return typeof contentType === 'string' && /^application\/json\s*(;|$)/i.test(contentType.trim());
}
