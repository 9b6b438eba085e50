/** Custom metrics the functions publish (EMF) and the dashboard and alarms read. */
export const METRICS_NAMESPACE = 'Hookledger';
/** One per intake request, dimensions `Outcome` (recorded, duplicate, a refusal code) and `service`. */
export const INTAKE_METRIC = 'IntakeRequests';
