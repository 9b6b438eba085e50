/**
 * Small, pure helpers shared by the constructs: where the repository root is, and how a config id
 * becomes part of a CloudFormation output id.
 */
import { fileURLToPath } from 'node:url';

/** Repository root: Lambda entries, the lock file and tsconfig.json are resolved from here. */
export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** `billing-meter` -> `BillingMeter`: readable output ids derived from config ids. */
export function pascalCase(id: string): string {
  return id
    .split('-')
    .filter((part) => part.length > 0)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

/**
 * Pascal-cased suffixes for a list of ids, refusing two ids that would collide (`a-1` and `a1` both
 * become `A1`), because output ids must be unique and must not depend on list order.
 */
export function outputSuffixes(ids: readonly string[], what: string): Map<string, string> {
  const byId = new Map<string, string>();
  const seen = new Map<string, string>();
  for (const id of ids) {
    const suffix = pascalCase(id);
    const clash = seen.get(suffix);
    if (clash !== undefined && clash !== id) {
      throw new Error(
        `${what} ids "${clash}" and "${id}" both become the output suffix "${suffix}"; rename one of them`,
      );
    }
    seen.set(suffix, id);
    byId.set(id, suffix);
  }
  return byId;
}
