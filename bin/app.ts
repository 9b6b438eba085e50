/**
 * The CDK app: one HookledgerStack built from hookledger.config.ts.
 * Stack name: `-c stackName=...` (default `Hookledger`), so several copies can live in one account.
 */
import { App } from 'aws-cdk-lib';
import config from '../hookledger.config';
import { addHookledgerStack } from '../lib/hookledger-stack';

addHookledgerStack(new App(), config);
