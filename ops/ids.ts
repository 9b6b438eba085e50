/** The id makers live with the Lambdas (the reconciler makes repair ids too); re-exported for the CLI. */
export { newAuditId, newEventId, newKeyId, newRepairId, newReplayId, ulid } from '../adapters/ids';
