/**
 * Message of a thrown value, as a dead-letter record reports it: an Error-like `message`, a thrown string as is, a plain object as
 * its JSON text (so `throw {code: 42}` keeps its fields), any other value as String(value); null for none.
 */
export function errorMessage(error: unknown): string | null {
  if (error === undefined || error === null) return null;
  if (typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string') {
    return (error as { message: string }).message;
  }
  if (typeof error === 'string') return error;
  if (typeof error === 'object') {
    try {
      return JSON.stringify(error) ?? String(error);
    } catch {
      return String(error); // cyclic or a throwing toJSON
    }
  }
  return String(error);
}

/**
 * The text of a thrown value for a log line or another error's message: what a dead-letter record would say
 * (an Error's message, a string as is, a plain object as JSON), else String(value).
 */
export const errorText = (error: unknown): string => errorMessage(error) ?? String(error);
