/**
 * Checkpoints of paged jobs (the scheduled reconcile): one EventStore item per job, `ckpt#<job>`,
 * overwritten by each run that stops early and by the run that completes the window. Not in the
 * stream filter (kind `checkpoint`), not in the window index (no index keys).
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { checkpointKey } from '../core/model';

export interface CheckpointItem<State> {
  readonly pk: string;
  readonly kind: 'checkpoint';
  readonly job: string;
  readonly updatedAt: number;
  readonly state: State;
}

export class CheckpointStore<State> {
  constructor(
    private readonly deps: { readonly ddb: DynamoDBDocumentClient; readonly tableName: string },
    private readonly job: string,
  ) {}

  /** Strongly consistent: the previous run's write must be seen. */
  async load(): Promise<CheckpointItem<State> | undefined> {
    const out = await this.deps.ddb.send(
      new GetCommand({ TableName: this.deps.tableName, Key: { pk: checkpointKey(this.job) }, ConsistentRead: true }),
    );
    return out.Item as CheckpointItem<State> | undefined;
  }

  async save(state: State, at: number): Promise<void> {
    const item: CheckpointItem<State> = { pk: checkpointKey(this.job), kind: 'checkpoint', job: this.job, updatedAt: at, state };
    await this.deps.ddb.send(new PutCommand({ TableName: this.deps.tableName, Item: item }));
  }
}
