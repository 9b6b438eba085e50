/** Custom metrics the functions publish (EMF) and the dashboard and alarms read. */
export const METRICS_NAMESPACE = 'Hookledger';
/** One per intake request, dimensions `Outcome` (recorded, duplicate, a refusal code) and `Stack`. */
export const INTAKE_METRIC = 'IntakeRequests';
/** Dimension names of IntakeRequests, in the order the dashboard's SEARCH schema lists them. */
export const INTAKE_DIMENSIONS = ['Outcome', 'Stack'] as const;
/** Fan-out deliveries skipped because the consumer is no longer configured; dimensions `Consumer` and `Stack`. */
export const FANOUT_SKIPPED_METRIC = 'FanOutSkippedDeliveries';
/** One per failed read of a signing secret, dimensions `Stack` and `Served` (`stale`: last known values served; `none`: 503). */
export const SECRET_REFRESH_FAILURE_METRIC = 'SecretRefreshFailures';
