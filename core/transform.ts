/**
 * The contract of an HTTP destination's transform (`transform: 'transforms/<name>.ts'` on a
 * `kind: 'http'` consumer): the module exports `transform`, bundled into that consumer's worker and
 * run on each delivery before signing. What it returns is what is POSTed: `body` as JSON, its
 * `headers` beside hookledger's own. A throw quarantines the delivery with its message.
 */

export interface TransformInput {
  readonly eventId: string;
  readonly eventType: string;
  readonly tenantId: string;
  readonly keyId: string;
  /** The consumer's narrowed view (its `fields`), as a Lambda consumer's `handle` gets it. */
  readonly payload: Readonly<Record<string, unknown>>;
}

export interface TransformOutput {
  /** Sent as JSON (the bytes signed). */
  readonly body: unknown;
  /** Extra request headers; hookledger's own (webhook-*, content-type, user-agent, hookledger-*) cannot be replaced. */
  readonly headers?: Readonly<Record<string, string>>;
}

export type Transform = (input: TransformInput) => TransformOutput | Promise<TransformOutput>;

/** Header names a transform may not set: the signature, the media type, and hookledger's own. */
export function reservedHeader(name: string): boolean {
  const n = name.toLowerCase();
  return (
    n.startsWith('webhook-') ||
    n.startsWith('hookledger-') ||
    ['content-type', 'content-length', 'user-agent', 'host', 'transfer-encoding', 'connection'].includes(n)
  );
}

/**
 * What a transform returned, checked: a body that serialises to JSON and headers that are strings
 * under token names not reserved. Returns the problem, or undefined when it is well formed.
 */
export function checkTransformOutput(out: unknown): string | undefined {
  if (typeof out !== 'object' || out === null || !('body' in out)) return 'transform must return { body, headers? }';
  const { body, headers } = out as { body: unknown; headers?: unknown };
  let json: string | undefined;
  try {
    json = JSON.stringify(body);
  } catch (e) {
    return `transform returned a body that is not JSON: ${(e as Error).message}`;
  }
  if (json === undefined) return 'transform returned a body that is not JSON (undefined or a function)';
  if (headers === undefined) return undefined;
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) return 'transform headers must be an object of strings';
  for (const [name, value] of Object.entries(headers)) {
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) return `transform header name ${JSON.stringify(name)} is not a header name`;
    if (reservedHeader(name)) return `transform header ${name} is hookledger's own and cannot be set`;
    if (typeof value !== 'string' || /[\r\n\0]/.test(value)) return `transform header ${name} must be a string without line breaks`;
  }
  return undefined;
}
