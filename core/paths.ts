/**
 * The repository root: Lambda entries, the lock file and tsconfig.json (CDK), the local stack's
 * data, state and secrets files, and the CLI's view of them are all resolved from here.
 */
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = fileURLToPath(new URL('../', import.meta.url));
