/**
 * The functions' logger on AWS: Powertools' Logger, loaded with the first line that will be printed.
 * Each handler's common path logs only at DEBUG (a recorded webhook, an acknowledged delivery: their
 * durable records are the receipt and the ledger row), which the deployed INFO level drops, so most
 * execution environments never load the Logger module and its 21 KiB stay out of every cold start.
 * A line at a printed level loads it (one chunk of the bundle, `import()`); lines written meanwhile
 * are kept in order and printed once it is in, and `flush()`, which every Lambda entry awaits before
 * answering (`flushingLogs`), holds the answer until they are out. The level is decided as
 * `createLogger` and Powertools decide it: Lambda's application log level (`AWS_LAMBDA_LOG_LEVEL`)
 * first, then `POWERTOOLS_LOG_LEVEL`, else INFO; with debug sampling on (`POWERTOOLS_LOGGER_SAMPLE_RATE`)
 * every line loads the Logger and Powertools decides.
 */
import type { Logger } from './logger';

/** Powertools' thresholds (@aws-lambda-powertools/logger LogLevelThreshold). */
const THRESHOLD: Readonly<Record<string, number>> = { TRACE: 6, DEBUG: 8, INFO: 12, WARN: 16, ERROR: 20, CRITICAL: 24, SILENT: 28 };

type Level = 'debug' | 'info' | 'warn' | 'error';
/** One call's arguments: the message and its extra attributes, as Powertools takes them. */
type Line = unknown[];
type Print = (...line: Line) => void;

export interface LambdaLogger extends Logger {
  /** Resolves once every line written so far is printed (at once when none waits for the Logger to load). */
  flush(): Promise<void>;
  /** Whether Powertools' Logger has been loaded (tests). */
  readonly loaded: boolean;
}

/** The lowest level that will be printed, as Powertools would decide it; 0 when only Powertools can say. */
export function printedFrom(env: Readonly<Record<string, string | undefined>>): number {
  if (Number(env.POWERTOOLS_LOGGER_SAMPLE_RATE ?? 0) > 0) return 0;
  const level = (env.AWS_LAMBDA_LOG_LEVEL || env.POWERTOOLS_LOG_LEVEL || 'INFO').toUpperCase();
  return THRESHOLD[level] ?? 0;
}

export function createLambdaLogger(serviceName: string, env: Readonly<Record<string, string | undefined>> = process.env): LambdaLogger {
  const printedAt = printedFrom(env);
  let logger: Logger | undefined;
  let loading: Promise<void> | undefined;
  const waiting: [Level, Line][] = [];

  const write = (level: Level, line: Line): void => {
    if (logger) {
      (logger[level] as Print)(...line);
      return;
    }
    if (THRESHOLD[level.toUpperCase()]! < printedAt) return;
    waiting.push([level, line]);
    loading ??= import('./logger').then(
      ({ createLogger }) => {
        const loaded = createLogger(serviceName);
        for (const [l, line] of waiting.splice(0)) (loaded[l] as Print)(...line);
        logger = loaded;
      },
      (error: unknown) => {
        // The Logger module could not be read: print what waits in one JSON line each, never lose it.
        for (const [l, [message, ...extra]] of waiting.splice(0)) {
          console.error(
            JSON.stringify({ level: l.toUpperCase(), message, service: serviceName, logger_unavailable: String(error), extra }),
          );
        }
        loading = undefined;
      },
    );
  };

  return {
    debug: (...line: Line) => write('debug', line),
    info: (...line: Line) => write('info', line),
    warn: (...line: Line) => write('warn', line),
    error: (...line: Line) => write('error', line),
    flush: async () => {
      await loading;
    },
    get loaded() {
      return logger !== undefined;
    },
  };
}

/**
 * `handler` answering only once `logger`'s lines are printed (see createLambdaLogger). An error that
 * escapes it leaves with its stack mapped to the sources (./stack-map.ts, loaded then), for the line
 * the Lambda runtime logs.
 */
export function flushingLogs<A extends unknown[], R>(
  logger: LambdaLogger,
  handler: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return await handler(...args);
    } catch (error) {
      await import('./stack-map').then(
        ({ mapErrorStack }) => mapErrorStack(error),
        () => undefined, // the module unreadable: the error leaves as it came
      );
      throw error;
    } finally {
      await logger.flush();
    }
  };
}
