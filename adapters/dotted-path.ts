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
