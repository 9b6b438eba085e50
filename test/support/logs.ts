import { Logger } from '@aws-lambda-powertools/logger';

/** A Powertools logger whose JSON lines are captured in memory, for assertions about what is logged. */
export function capturingLogger(serviceName = 'test') {
  const lines: string[] = [];
  const sink = {
    info: (line: string) => lines.push(line),
    warn: (line: string) => lines.push(line),
    error: (line: string) => lines.push(line),
    debug: (line: string) => lines.push(line),
    trace: (line: string) => lines.push(line),
    log: (line: string) => lines.push(line),
  };
  const logger = new Logger({ serviceName, logLevel: 'DEBUG' });
  // Powertools writes through its console; route it to memory.
  (logger as unknown as { console: typeof sink }).console = sink;
  return { logger, lines };
}
