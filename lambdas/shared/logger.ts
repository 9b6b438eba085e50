import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';

/**
 * Structured JSON logs (Powertools). Callers log ids and outcomes only: event_id, tenant_id,
 * consumer_id, attempt. Never a secret, a signature or a raw payload. The Lambda entries use
 * createLambdaLogger (./lambda-logger), which loads this module with the first line it prints.
 */
export function createLogger(serviceName: string, options: { silent?: boolean } = {}): PowertoolsLogger {
  return new PowertoolsLogger({
    serviceName,
    logLevel: options.silent ? 'SILENT' : ((process.env.POWERTOOLS_LOG_LEVEL as 'INFO' | undefined) ?? 'INFO'),
  });
}

/** What the handlers log through: Powertools' four levels (a Powertools Logger is one). */
export type Logger = Pick<PowertoolsLogger, 'debug' | 'info' | 'warn' | 'error'>;
