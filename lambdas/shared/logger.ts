import { Logger } from '@aws-lambda-powertools/logger';

/**
 * Structured JSON logs (Powertools). Callers log ids and outcomes only: event_id, tenant_id,
 * consumer_id, attempt. Never a secret, a signature or a raw payload.
 */
export function createLogger(serviceName: string, options: { silent?: boolean } = {}): Logger {
  return new Logger({
    serviceName,
    logLevel: options.silent ? 'SILENT' : ((process.env.POWERTOOLS_LOG_LEVEL as 'INFO' | undefined) ?? 'INFO'),
  });
}

export type { Logger };
