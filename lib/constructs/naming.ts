/** Where the repository root is: Lambda entries, the lock file and tsconfig.json are resolved from here. */
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
