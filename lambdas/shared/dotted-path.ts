/**
 * Dotted JSON paths (`data.object.id`): how the config names attribution fields in a body and the
 * payload fields a consumer may see.
 */

/** Own properties only: a path never walks into a prototype. */
export function readPath(root: unknown, path: string): unknown {
  let node: unknown = root;
  for (const key of path.split('.')) {
    if (!node || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * Narrow access: a consumer sees only the payload fields its config lists (dotted paths); the
 * rest of the provider's payload never reaches its code.
 */
export function narrowPayload(payload: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    const value = readPath(payload, field);
    if (value === undefined) continue;
    const keys = field.split('.');
    let node = out;
    keys.forEach((key, i) => {
      if (i === keys.length - 1) {
        node[key] = value;
      } else {
        if (!node[key] || typeof node[key] !== 'object') node[key] = {};
        node = node[key] as Record<string, unknown>;
      }
    });
  }
  return out;
}

/**
 * The fields of a stored body, for narrowing: a JSON object or array as parsed, otherwise the
 * fields of a form-urlencoded body (the two kinds intake accepts; a form field repeated reads as its
 * first value, as at intake). Never throws: bytes that are neither give no fields.
 */
export function storedBodyFields(raw: Buffer): Record<string, unknown> {
  const text = raw.toString('utf8');
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') return parsed as Record<string, unknown>;
  } catch {
    // not JSON: a form body
  }
  const fields: Record<string, unknown> = {};
  for (const [name, value] of new URLSearchParams(text)) if (!Object.hasOwn(fields, name)) fields[name] = value;
  return fields;
}
