/** Errors the operations raise; the CLI maps them to exit codes and prints their message. */

/** The request itself is wrong (unknown consumer, bad window): fix the command line. Exit 2. */
export class OpsUsageError extends Error {
  override readonly name = 'OpsUsageError';
}

/** The thing asked about does not exist (event, key). Exit 1. */
export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
}

/** The write was refused because of what is already there (an existing key id). Exit 1. */
export class ConflictError extends Error {
  override readonly name = 'ConflictError';
}

/** The operation ran but did not finish (a move task that failed). Exit 3. */
export class OperationFailedError extends Error {
  override readonly name = 'OperationFailedError';
}
