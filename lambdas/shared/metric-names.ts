/** Custom metrics the functions publish (EMF) and the dashboard and alarms read. */
export const METRICS_NAMESPACE = 'Hookledger';
/** One per intake request, dimensions `Outcome` (recorded, duplicate, a refusal code) and `service`. */
export const INTAKE_METRIC = 'IntakeRequests';
/** One per failed read of a signing secret, dimension `Served` (`stale`: last known values served; `none`: 503). */
export const SECRET_REFRESH_FAILURE_METRIC = 'SecretRefreshFailures';
