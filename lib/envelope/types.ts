/** `meta` of a schema_version 1 envelope; unknown keys are kept. */
export interface EnvelopeMeta {
  id: string;
  queue: string;
  lang: string;
  schema_version: number;
  created_at: number;
  [key: string]: unknown;
}

/** The additive block of a dead-lettered record (docs/contract.md#dead-letter-records). */
export interface DeadLetterBlock {
  reason: 'failed' | 'unknown_urn' | 'poison';
  error: string | null;
  exception: string | null;
  failed_at: number;
  original_queue: string;
  attempts: number;
  lang: string;
  [key: string]: unknown;
}

/** The BabelQueue wire envelope (schema_version 1); unknown root keys are kept. */
export interface Envelope {
  job: string;
  trace_id: string;
  data: Record<string, unknown>;
  meta: EnvelopeMeta;
  attempts: number;
  dead_letter?: DeadLetterBlock;
  [key: string]: unknown;
}

export interface DecodeResult {
  /** The decoded object (or {} when the bytes are not UTF-8 / not JSON / not an object). `urn` alias resolved into job. */
  envelope: Record<string, unknown>;
  /** null when the bytes decoded to a JSON object; otherwise why not. */
  error: string | null;
  /** One entry per dropped forbidden key, naming its JSON pointer. */
  warnings: string[];
}

export interface MakeOptions {
  queue?: string;
  traceId?: string;
  /** `meta.id` chosen by the caller (e.g. to retry a publish without a duplicate); a new UUID when absent. */
  id?: string;
}

export interface DecodeOptions {
  onWarning?: (message: string) => void;
}
