import { errorMessage } from './dead-letter.js';

/**
 * The text of a thrown value for a log line or another error's message: what a dead-letter record would say
 * (an Error's message, a string as is, a plain object as JSON), else String(value).
 */
export const errorText = (error: unknown): string => errorMessage(error) ?? String(error);
