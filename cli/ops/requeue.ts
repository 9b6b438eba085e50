/** Re-queue items (replay, backfill, repair): the writer lives with the Lambdas, which repair too. */
export { putRequeue, REQUEUE_TTL_SECONDS, requeueItem } from '../../lambdas/shared/requeue';
