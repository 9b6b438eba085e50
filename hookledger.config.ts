/**
 * The deployment's sources (webhook registrations) and consumers (internal workers).
 * Edit this file to add a consumer; see README "Add a consumer".
 */
import { defineConfig } from './core/config/schema';

export default defineConfig({
  sources: [
    {
      id: 'platform',
      scheme: { type: 'standard-webhooks' },
      attribution: {
        eventId: { body: 'id' },
        eventType: { body: 'type' },
        tenantId: { body: 'tenant_id' },
        keyId: { body: 'key_id' },
      },
    },
  ],
  consumers: [
    {
      id: 'billing-meter',
      subscribes: ['*'],
      fields: ['id', 'type', 'tenant_id', 'data.amount', 'data.currency'],
      entry: 'lambdas/consumers/billing-meter.ts',
      policyVersion: 'units-2026-11',
      maxReceiveCount: 5,
      visibilityTimeoutSeconds: 60,
      timeoutSeconds: 10,
      alarmAgeSeconds: 900,
    },
    {
      id: 'audit-writer',
      subscribes: ['*'],
      fields: ['id', 'type', 'tenant_id', 'key_id', 'created'],
      entry: 'lambdas/consumers/audit-writer.ts',
      policyVersion: 'audit-v1',
      maxReceiveCount: 5,
      visibilityTimeoutSeconds: 60,
      timeoutSeconds: 10,
      alarmAgeSeconds: 900,
    },
    {
      id: 'risk-evaluator',
      subscribes: ['payment.*', 'scoped_key.*'],
      fields: ['id', 'type', 'tenant_id', 'key_id', 'data'],
      entry: 'lambdas/consumers/risk-evaluator.ts',
      policyVersion: 'risk-rules-3',
      maxReceiveCount: 4,
      visibilityTimeoutSeconds: 90,
      timeoutSeconds: 15,
      alarmAgeSeconds: 600,
    },
  ],
  retention: { payloadDays: 30 },
});
