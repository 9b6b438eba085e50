/**
 * The local IAM check (local/assembly/iam.ts): calls evaluated against a role's policies, and the
 * least-privilege report of what each role was granted, used, left unused and was denied.
 */
import { describe, expect, it } from 'vitest';
import { createAuthorizer, type Denial, formatUsage, type LocalPrincipal } from '../../../local/assembly/iam';

const orders = 'arn:aws:sqs:us-east-1:000000000000:hl-orders';
const ledger = 'arn:aws:dynamodb:us-east-1:000000000000:table/Ledger';

const billingMeter: LocalPrincipal = {
  accessKeyId: 'AKLOCALBillingMeterWorker',
  secretAccessKey: 'secret-of-tenant_204',
  functionId: 'BillingMeterWorker',
  roleId: 'BillingMeterRole',
  roleArn: 'arn:aws:iam::000000000000:role/BillingMeterRole',
  policies: [
    {
      name: 'BillingMeterPolicy',
      policy: {
        Version: '2012-10-17',
        Statement: [
          { Effect: 'Allow', Action: ['sqs:SendMessage', 'dynamodb:GetItem'], Resource: [orders, ledger] },
          // The Lambda platform's, not a call the local stack sees: left out of the report.
          { Effect: 'Allow', Action: 'logs:CreateLogStream', Resource: '*' },
        ],
      },
    },
  ],
};

describe('createAuthorizer', () => {
  it('allows what the role grants, denies the rest naming the call, and reports granted, used, unused and denied per role', async () => {
    const seen: Denial[] = [];
    const authorizer = createAuthorizer(new Map([[billingMeter.accessKeyId, billingMeter]]), (denial) => seen.push(denial));

    expect(await authorizer.authorize(billingMeter, { action: 'sqs:SendMessage', resource: orders })).toEqual({
      allowed: true,
      result: 'Allowed',
    });
    const other = 'arn:aws:sqs:us-east-1:000000000000:hl-other';
    expect(await authorizer.authorize(billingMeter, { action: 'sqs:SendMessage', resource: other })).toEqual({
      allowed: false,
      result: 'ImplicitlyDenied',
    });

    const denial = { principal: billingMeter.roleArn, functionId: 'BillingMeterWorker', action: 'sqs:SendMessage', resource: other };
    expect(seen).toEqual([denial]);
    expect(authorizer.denials()).toEqual([denial]);
    expect(authorizer.report()).toEqual([
      {
        roleId: 'BillingMeterRole',
        functions: ['BillingMeterWorker'],
        granted: ['dynamodb:GetItem', 'sqs:SendMessage'],
        used: ['sqs:SendMessage'],
        unused: ['dynamodb:GetItem'],
        denied: ['sqs:SendMessage'],
      },
    ]);
    expect(formatUsage(authorizer.report()).split('\n').at(-1)).toBe(
      '| BillingMeterRole | `dynamodb:GetItem`, `sqs:SendMessage` | `sqs:SendMessage` | `dynamodb:GetItem` | `sqs:SendMessage` |',
    );
  });
});
