// The fingerprint every parity scenario must produce, on the testing kit and on the broker with either client.
import type { Fingerprint } from './parity-scenarios.js';

export const expectedFingerprints: Record<string, Fingerprint> = {
  'happy path': {
    kind: 'handled',
    deliveries: [
      {
        action: 'ack',
        urn: 'urn:parity:ok',
      },
    ],
    retries: [],
    calls: [
      {
        urn: 'urn:parity:ok',
        attempts: 0,
      },
    ],
  },
  'retries to the dead-letter topic': {
    kind: 'dead-lettered',
    reason: 'failed',
    deliveries: [
      {
        action: 'retry',
        attempt: 1,
        urn: 'urn:parity:fail',
      },
      {
        action: 'retry',
        attempt: 2,
        urn: 'urn:parity:fail',
      },
      {
        action: 'dead-letter',
        reason: 'failed',
        urn: 'urn:parity:fail',
      },
    ],
    retries: [
      {
        properties: {
          'bq-job': 'urn:parity:fail',
          'bq-trace-id': 'trace-parity',
          'bq-message-id': '7d1c0b52-3f7e-4c1a-9a55-2f0e8f6c9a10',
          'bq-schema-version': '1',
          'bq-source-lang': 'node',
          'bq-attempts': '1',
        },
        body: {
          job: 'urn:parity:fail',
          trace_id: 'trace-parity',
          data: {
            order_id: 2,
          },
          meta: {
            id: '7d1c0b52-3f7e-4c1a-9a55-2f0e8f6c9a10',
            queue: '<topic>',
            lang: 'node',
            schema_version: 1,
            created_at: '<time>',
          },
          attempts: 1,
        },
      },
      {
        properties: {
          'bq-job': 'urn:parity:fail',
          'bq-trace-id': 'trace-parity',
          'bq-message-id': '7d1c0b52-3f7e-4c1a-9a55-2f0e8f6c9a10',
          'bq-schema-version': '1',
          'bq-source-lang': 'node',
          'bq-attempts': '2',
        },
        body: {
          job: 'urn:parity:fail',
          trace_id: 'trace-parity',
          data: {
            order_id: 2,
          },
          meta: {
            id: '7d1c0b52-3f7e-4c1a-9a55-2f0e8f6c9a10',
            queue: '<topic>',
            lang: 'node',
            schema_version: 1,
            created_at: '<time>',
          },
          attempts: 2,
        },
      },
    ],
    deadLetter: {
      properties: {
        'bq-job': 'urn:parity:fail',
        'bq-trace-id': 'trace-parity',
        'bq-message-id': '7d1c0b52-3f7e-4c1a-9a55-2f0e8f6c9a10',
        'bq-schema-version': '1',
        'bq-source-lang': 'node',
        'bq-attempts': '3',
        'bq-dead-letter-reason': 'failed',
        'bq-dead-letter-error': 'payment provider down',
        'bq-dead-letter-attempts': '3',
        'bq-dead-letter-original-queue': '<topic>',
        'bq-dead-letter-failed-at': '<time>',
        'bq-dead-letter-lang': 'node',
        'bq-dead-letter-topic': 'persistent://public/default/<topic>',
      },
      body: {
        job: 'urn:parity:fail',
        trace_id: 'trace-parity',
        data: {
          order_id: 2,
        },
        meta: {
          id: '7d1c0b52-3f7e-4c1a-9a55-2f0e8f6c9a10',
          queue: '<topic>',
          lang: 'node',
          schema_version: 1,
          created_at: '<time>',
        },
        attempts: 3,
        dead_letter: {
          reason: 'failed',
          error: 'payment provider down',
          exception: 'Error',
          failed_at: '<time>',
          original_queue: '<topic>',
          attempts: 3,
          lang: 'node',
        },
      },
    },
    calls: [
      {
        urn: 'urn:parity:fail',
        attempts: 0,
      },
      {
        urn: 'urn:parity:fail',
        attempts: 1,
      },
      {
        urn: 'urn:parity:fail',
        attempts: 2,
      },
    ],
  },
  'non-retriable (a pipe rejects the payload)': {
    kind: 'dead-lettered',
    reason: 'failed',
    deliveries: [
      {
        action: 'dead-letter',
        reason: 'failed',
        urn: 'urn:parity:validated',
      },
    ],
    retries: [],
    deadLetter: {
      properties: {
        'bq-job': 'urn:parity:validated',
        'bq-trace-id': 'trace-parity',
        'bq-message-id': '7d1c0b52-3f7e-4c1a-9a55-2f0e8f6c9a10',
        'bq-schema-version': '1',
        'bq-source-lang': 'node',
        'bq-attempts': '1',
        'bq-dead-letter-reason': 'failed',
        'bq-dead-letter-error': 'amount must not be negative',
        'bq-dead-letter-attempts': '1',
        'bq-dead-letter-original-queue': '<topic>',
        'bq-dead-letter-failed-at': '<time>',
        'bq-dead-letter-lang': 'node',
        'bq-dead-letter-topic': 'persistent://public/default/<topic>',
      },
      body: {
        job: 'urn:parity:validated',
        trace_id: 'trace-parity',
        data: {
          amount: -5,
        },
        meta: {
          id: '7d1c0b52-3f7e-4c1a-9a55-2f0e8f6c9a10',
          queue: '<topic>',
          lang: 'node',
          schema_version: 1,
          created_at: '<time>',
        },
        attempts: 1,
        dead_letter: {
          reason: 'failed',
          error: 'amount must not be negative',
          exception: 'BadRequestException',
          failed_at: '<time>',
          original_queue: '<topic>',
          attempts: 1,
          lang: 'node',
        },
      },
    },
    calls: [],
  },
  poison: {
    kind: 'dead-lettered',
    reason: 'poison',
    deliveries: [
      {
        action: 'dead-letter',
        reason: 'poison',
        urn: null,
      },
    ],
    retries: [],
    deadLetter: {
      properties: {
        'bq-job': 'urn:parity:ok',
        'bq-message-id': '7d1c0b52-3f7e-4c1a-9a55-2f0e8f6c9a10',
        'bq-dead-letter-reason': 'poison',
        'bq-dead-letter-error': 'payload is not valid JSON: expected a string key, found character "t" at position 25',
        'bq-dead-letter-attempts': '1',
        'bq-dead-letter-original-queue': '<topic>',
        'bq-dead-letter-failed-at': '<time>',
        'bq-dead-letter-lang': 'node',
        'bq-dead-letter-topic': 'persistent://public/default/<topic>',
      },
      body: '{"job": "urn:parity:ok", truncated',
    },
    calls: [],
  },
  'gate (an unsupported schema version)': {
    kind: 'acknowledged',
    deliveries: [
      {
        action: 'ack',
        urn: null,
      },
    ],
    retries: [],
    calls: [],
  },
  'unknown URN': {
    kind: 'dead-lettered',
    reason: 'unknown_urn',
    deliveries: [
      {
        action: 'retry',
        attempt: 1,
        urn: 'urn:parity:nobody',
      },
      {
        action: 'retry',
        attempt: 2,
        urn: 'urn:parity:nobody',
      },
      {
        action: 'dead-letter',
        reason: 'unknown_urn',
        urn: 'urn:parity:nobody',
      },
    ],
    retries: [
      {
        properties: {
          'bq-job': 'urn:parity:nobody',
          'bq-trace-id': 'trace-parity',
          'bq-message-id': '7d1c0b52-3f7e-4c1a-9a55-2f0e8f6c9a10',
          'bq-schema-version': '1',
          'bq-source-lang': 'node',
          'bq-attempts': '1',
        },
        body: {
          job: 'urn:parity:nobody',
          trace_id: 'trace-parity',
          data: {
            order_id: 6,
          },
          meta: {
            id: '7d1c0b52-3f7e-4c1a-9a55-2f0e8f6c9a10',
            queue: '<topic>',
            lang: 'node',
            schema_version: 1,
            created_at: '<time>',
          },
          attempts: 1,
        },
      },
      {
        properties: {
          'bq-job': 'urn:parity:nobody',
          'bq-trace-id': 'trace-parity',
          'bq-message-id': '7d1c0b52-3f7e-4c1a-9a55-2f0e8f6c9a10',
          'bq-schema-version': '1',
          'bq-source-lang': 'node',
          'bq-attempts': '2',
        },
        body: {
          job: 'urn:parity:nobody',
          trace_id: 'trace-parity',
          data: {
            order_id: 6,
          },
          meta: {
            id: '7d1c0b52-3f7e-4c1a-9a55-2f0e8f6c9a10',
            queue: '<topic>',
            lang: 'node',
            schema_version: 1,
            created_at: '<time>',
          },
          attempts: 2,
        },
      },
    ],
    deadLetter: {
      properties: {
        'bq-job': 'urn:parity:nobody',
        'bq-trace-id': 'trace-parity',
        'bq-message-id': '7d1c0b52-3f7e-4c1a-9a55-2f0e8f6c9a10',
        'bq-schema-version': '1',
        'bq-source-lang': 'node',
        'bq-attempts': '3',
        'bq-dead-letter-reason': 'unknown_urn',
        'bq-dead-letter-error': 'no handler is registered for URN "urn:parity:nobody"',
        'bq-dead-letter-attempts': '3',
        'bq-dead-letter-original-queue': '<topic>',
        'bq-dead-letter-failed-at': '<time>',
        'bq-dead-letter-lang': 'node',
        'bq-dead-letter-topic': 'persistent://public/default/<topic>',
      },
      body: {
        job: 'urn:parity:nobody',
        trace_id: 'trace-parity',
        data: {
          order_id: 6,
        },
        meta: {
          id: '7d1c0b52-3f7e-4c1a-9a55-2f0e8f6c9a10',
          queue: '<topic>',
          lang: 'node',
          schema_version: 1,
          created_at: '<time>',
        },
        attempts: 3,
        dead_letter: {
          reason: 'unknown_urn',
          error: 'no handler is registered for URN "urn:parity:nobody"',
          exception: 'UnknownUrnError',
          failed_at: '<time>',
          original_queue: '<topic>',
          attempts: 3,
          lang: 'node',
        },
      },
    },
    calls: [],
  },
  'delayed retry': {
    kind: 'handled',
    deliveries: [
      {
        action: 'retry',
        attempt: 1,
        urn: 'urn:parity:flaky',
      },
      {
        action: 'ack',
        urn: 'urn:parity:flaky',
      },
    ],
    retries: [
      {
        properties: {
          'bq-job': 'urn:parity:flaky',
          'bq-trace-id': 'trace-parity',
          'bq-message-id': '7d1c0b52-3f7e-4c1a-9a55-2f0e8f6c9a10',
          'bq-schema-version': '1',
          'bq-source-lang': 'node',
          'bq-attempts': '1',
          'bq-delay': '1500',
        },
        body: {
          job: 'urn:parity:flaky',
          trace_id: 'trace-parity',
          data: {
            order_id: 7,
          },
          meta: {
            id: '7d1c0b52-3f7e-4c1a-9a55-2f0e8f6c9a10',
            queue: '<topic>',
            lang: 'node',
            schema_version: 1,
            created_at: '<time>',
          },
          attempts: 1,
        },
      },
    ],
    calls: [
      {
        urn: 'urn:parity:flaky',
        attempts: 0,
      },
      {
        urn: 'urn:parity:flaky',
        attempts: 1,
      },
    ],
  },
  'idempotency (the same id twice)': {
    kind: 'handled',
    deliveries: [
      {
        action: 'ack',
        urn: 'urn:parity:ok',
      },
    ],
    retries: [],
    calls: [
      {
        urn: 'urn:parity:ok',
        attempts: 0,
      },
    ],
  },
};
