/** The adapters' typed errors: SDK errors are translated into these; handlers translate these into responses. */
import { HookledgerError } from '../core/errors';

/** The table, bucket or secret store could not be reached or refused for capacity: retry later. */
export class StorageUnavailableError extends HookledgerError {
  override readonly name = 'StorageUnavailableError';
}
