/** `hookledger keys issue|revoke|list`: the tenant key registry. */
import type { Command } from 'commander';
import type { KeyItem } from '../../core/model';
import { iso } from '../../ops/time';
import { table } from '../format';
import type { CommandContext } from './context';

export function register(program: Command, ctx: CommandContext): void {
  const keys = program.command('keys').description('the tenant key registry: issue, revoke, list');
  keys
    .command('issue')
    .description('register a key for a tenant (key ids are never reused)')
    .requiredOption('--tenant <id>', 'the tenant the key belongs to')
    .option('--key-id <id>', 'the key id (default: a new random one)')
    .action(
      ctx.withTarget(async (connect, globals, options: { tenant: string; keyId?: string }) => {
        const target = await connect();
        const { issueKey } = await import('../../ops/keys');
        const key = await issueKey(ctx.opsDeps(target), { tenant: options.tenant, keyId: options.keyId });
        ctx.print(globals, key, () => `issued ${key.keyId} for ${key.tenantId}`);
      }),
    );
  keys
    .command('revoke')
    .description('revoke a key: consumers see it revoked from now on; past events keep their attribution')
    .argument('<keyId>', 'the key id')
    .action(
      ctx.withTarget(async (connect, globals, keyId: string) => {
        const target = await connect();
        const { revokeKey } = await import('../../ops/keys');
        const result = await revokeKey(ctx.opsDeps(target), { keyId });
        ctx.print(globals, result, () =>
          result.alreadyRevoked
            ? `${keyId} was already revoked at ${iso(result.key.revokedAt)}`
            : `revoked ${keyId} (tenant ${result.key.tenantId})`,
        );
      }),
    );
  keys
    .command('list')
    .description('registered keys, newest first')
    .option('--tenant <id>', 'only this tenant')
    .action(
      ctx.withTarget(async (connect, globals, options: { tenant?: string }) => {
        const target = await connect();
        const { listKeys } = await import('../../ops/keys');
        const list = await listKeys({ ddb: target.ddb, tables: target.tables }, { tenant: options.tenant });
        ctx.print(globals, list, () => formatKeys(list));
      }),
    );
}

export function formatKeys(list: readonly KeyItem[]): string {
  return list.length === 0
    ? 'no keys'
    : table(list, [
        { header: 'KEY', value: (k) => k.keyId },
        { header: 'TENANT', value: (k) => k.tenantId },
        { header: 'STATUS', value: (k) => k.status },
        { header: 'CREATED', value: (k) => iso(k.createdAt) },
        { header: 'REVOKED', value: (k) => (k.revokedAt ? iso(k.revokedAt) : undefined) },
      ]);
}
