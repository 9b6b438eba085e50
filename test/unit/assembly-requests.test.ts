/**
 * Assembly mode's mapping of an S3 request to what IAM evaluates (local/assembly/requests.ts): a
 * PutObject that carries tags is also an s3:PutObjectTagging on the object, as AWS evaluates it.
 */
import { describe, expect, it } from 'vitest';
import { s3Requests } from '../../local/assembly/requests';

const OBJECT = 'http://127.0.0.1:4566/hookledger-payloads/payloads/platform/evt_01J8K7M2Q4/ab12';

describe('s3Requests', () => {
  it('maps a PutObject with x-amz-tagging to s3:PutObject and s3:PutObjectTagging on payloads/platform/evt_01J8K7M2Q4/ab12', () => {
    expect(s3Requests('PUT', new URL(OBJECT), true)).toEqual([
      { action: 's3:PutObject', resource: 'arn:aws:s3:::hookledger-payloads/payloads/platform/evt_01J8K7M2Q4/ab12' },
      { action: 's3:PutObjectTagging', resource: 'arn:aws:s3:::hookledger-payloads/payloads/platform/evt_01J8K7M2Q4/ab12' },
    ]);
  });

  it('maps an untagged PutObject to s3:PutObject alone', () => {
    expect(s3Requests('PUT', new URL(OBJECT)).map((r) => r.action)).toEqual(['s3:PutObject']);
  });

  it('maps ?tagging to the tagging actions and a ListObjectsV2 to s3:ListBucket with its s3:prefix', () => {
    expect(s3Requests('PUT', new URL(`${OBJECT}?tagging`)).map((r) => r.action)).toEqual(['s3:PutObjectTagging']);
    expect(s3Requests('GET', new URL(`${OBJECT}?tagging`)).map((r) => r.action)).toEqual(['s3:GetObjectTagging']);
    expect(s3Requests('GET', new URL('http://127.0.0.1:4566/hookledger-payloads?list-type=2&prefix=views%2Fbilling-meter%2F'))).toEqual([
      { action: 's3:ListBucket', resource: 'arn:aws:s3:::hookledger-payloads', context: { 's3:prefix': 'views/billing-meter/' } },
    ]);
  });
});
