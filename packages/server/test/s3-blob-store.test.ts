import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { computeDelay } from '@retryd/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlobNotFoundError, BlobStoreUnavailableError } from '../src/blobs/blob-store.js';
import { openS3BlobStore, S3BlobStore } from '../src/blobs/s3-blob-store.js';
import { BlobsUrlError, parseBlobsUrl, parseS3ObjectUrl } from '../src/blobs/s3-blobs-url.js';
import { S3_RETRY_POLICY, S3RetryStrategy } from '../src/blobs/s3-retry-strategy.js';
import { describeBlobStoreConformance } from './blob-store-conformance.js';
import { closedLoopbackPort, openTestS3BlobStore, startTestS3, testS3Credentials, type TestS3 } from './s3-blob-harness.js';

let s3: TestS3;
beforeAll(async () => {
  s3 = await startTestS3(['retryd-test', 'another-bucket']);
});
afterAll(() => s3.close());

const freshPrefix = () => `bodies/${randomUUID().slice(0, 8)}`;

// s3rver writes an object's file in place, so a read during a replacing PUT can fail; S3 never shows a partial object.
const emulated = { replacesInPlace: true };

describeBlobStoreConformance(
  'S3 (s3rver on loopback, fresh prefix)',
  async () => {
    const blobs = await openTestS3BlobStore(s3, freshPrefix());
    return { blobs, close: () => blobs.close() };
  },
  emulated,
);

describeBlobStoreConformance(
  'S3 (s3rver on loopback, another bucket, no prefix)',
  async () => {
    const blobs = await openTestS3BlobStore(s3, '', 'another-bucket');
    return { blobs, close: () => blobs.close() };
  },
  emulated,
);



describe('S3BlobStore', () => {
  it('keeps a blob at <prefix>/<tenant>/<key> in the configured bucket, and at <tenant>/<key> without a prefix', async () => {
    const prefix = freshPrefix();
    await using blobs = await openTestS3BlobStore(s3, prefix);
    const ref = await blobs.put('acme', 'task-1', 'hello');
    expect(ref).toBe('acme/task-1');
    expect((await s3.objectAt(`${prefix}/acme/task-1`))?.toString()).toBe('hello');
    await blobs.delete(ref);
    expect(await s3.objectAt(`${prefix}/acme/task-1`)).toBeUndefined();

    await using bare = await openTestS3BlobStore(s3, '', 'another-bucket');
    await bare.put('acme', 'task-2', 'bare');
    expect((await s3.objectAt('acme/task-2', 'another-bucket'))?.toString()).toBe('bare');
  });

  it('shares blobs between instances on one bucket and prefix', async () => {
    const prefix = freshPrefix();
    await using a = await openTestS3BlobStore(s3, prefix);
    await using b = await openTestS3BlobStore(s3, prefix);
    const ref = await a.put('default', 'k', 'from a');
    expect((await b.get(ref)).toString()).toBe('from a');
  });

  describe('adopt (enqueue by bodyRef)', () => {
    it("takes a caller's object under its tenant's part of the prefix, reads it, and never deletes it", async () => {
      const prefix = freshPrefix();
      await using blobs = await openTestS3BlobStore(s3, prefix);
      const bytes = randomBytes(300 * 1024);
      const url = await s3.callerPuts(`${prefix}/default/uploads/2024/order 1.bin`, bytes);
      const adopted = await blobs.adopt('default', url);
      expect(adopted).toEqual({ ok: true, ref: url });
      if (!adopted.ok) return;
      expect((await blobs.get(adopted.ref)).equals(bytes)).toBe(true);
      await blobs.delete(adopted.ref);
      await blobs.delete(adopted.ref);
      expect((await s3.objectAt(`${prefix}/default/uploads/2024/order 1.bin`))?.equals(bytes)).toBe(true);
    });

    it('reads the object as it is at each get (a caller who replaces it changes later attempts)', async () => {
      const prefix = freshPrefix();
      await using blobs = await openTestS3BlobStore(s3, prefix);
      const url = await s3.callerPuts(`${prefix}/default/doc.json`, '{"v":1}');
      const adopted = await blobs.adopt('default', url);
      if (!adopted.ok) throw new Error(adopted.rule);
      await s3.callerPuts(`${prefix}/default/doc.json`, '{"v":2}');
      expect((await blobs.get(adopted.ref)).toString()).toBe('{"v":2}');
    });

    it('refuses another bucket, another prefix, another tenant, traversal and the bare tenant prefix, naming the rule', async () => {
      const prefix = freshPrefix();
      await using blobs = await openTestS3BlobStore(s3, prefix);
      await s3.callerPuts(`${prefix}/acme/secret.json`, 'acme only');
      await s3.callerPuts(`${prefix}/default/x.json`, 'x', 'another-bucket');
      const cases: [string, RegExp][] = [
        ['s3://another-bucket/' + `${prefix}/default/x.json`, /configured bucket.*the bucket --blobs names/],
        [`s3://${s3.bucket}/elsewhere/default/x.json`, new RegExp(`s3://${s3.bucket}/${prefix}/default/<key> \\(this tenant's part`)],
        [`s3://${s3.bucket}/${prefix}/acme/secret.json`, /this tenant's part of the bucket/],
        [`s3://${s3.bucket}/${prefix}/default/../acme/secret.json`, /'\.' or '\.\.' segments/],
        [`s3://${s3.bucket}/${prefix}/default//x.json`, /empty, '\.' or '\.\.' segments/],
        [`s3://${s3.bucket}/${prefix}/default/`, /this tenant's part/],
        [`s3://${s3.bucket}/${prefix}/default/a\u0001b`, /control characters/],
        [`s3://${s3.bucket}/${prefix}/default/${'k'.repeat(1100)}`, /at most 1024 bytes/],
        [`https://${s3.bucket}.s3.amazonaws.com/${prefix}/default/x.json`, /the URL of an object in the configured bucket/],
        [`s3://${s3.bucket}`, /the URL of an object/],
      ];
      for (const [url, rule] of cases) {
        const adopted = await blobs.adopt('default', url);
        expect(adopted.ok, url).toBe(false);
        if (!adopted.ok) expect(adopted.rule, url).toMatch(rule);
      }
    });

    it('refuses a missing object, and one larger than maxAdoptBytes', async () => {
      const prefix = freshPrefix();
      await using blobs = await openTestS3BlobStore(s3, prefix);
      const missing = await blobs.adopt('default', `s3://${s3.bucket}/${prefix}/default/never-uploaded`);
      expect(missing).toMatchObject({ ok: false, rule: 'the URL of an existing object', got: expect.stringMatching(/no object at s3:/) });

      await using small = new S3BlobStore({ client: testClient(s3.endpoint), bucket: s3.bucket, prefix, maxAdoptBytes: 10 });
      const url = await s3.callerPuts(`${prefix}/default/eleven`, '12345678901');
      expect(await small.adopt('default', url)).toEqual({ ok: false, rule: 'the URL of an object of at most 10 bytes', got: '11 bytes' });
      const ten = await s3.callerPuts(`${prefix}/default/ten`, '1234567890');
      expect(await small.adopt('default', ten)).toEqual({ ok: true, ref: ten });
      // Replaced by a larger object after the check: an attempt fails rather than read it.
      await s3.callerPuts(`${prefix}/default/ten`, '12345678901');
      await expect(small.get(ten)).rejects.toThrow(/now holds 11 bytes, more than the 10 retryd sends/);
    });

    it('reads adopted refs only inside its bucket and prefix', async () => {
      const prefix = freshPrefix();
      await using blobs = await openTestS3BlobStore(s3, prefix);
      for (const ref of [`s3://${s3.bucket}/elsewhere/default/x`, `s3://${s3.bucket}/${prefix}/default/`, `s3://${s3.bucket}/${prefix}/../x/y`]) {
        await expect(blobs.get(ref)).rejects.toThrow(/blob ref made by put\(\) or adopt\(\)/);
      }
      await expect(blobs.get(`s3://${s3.bucket}/${prefix}/default/gone`)).rejects.toBeInstanceOf(BlobNotFoundError);
    });
  });

  describe('when S3 cannot answer', () => {
    it('retries a refused connection three times, then rejects with BlobStoreUnavailableError (STORE_UNAVAILABLE)', async () => {
      const port = await closedLoopbackPort();
      await using blobs = new S3BlobStore({ client: testClient(`http://127.0.0.1:${port}`), bucket: 'retryd-test', prefix: 'p' });
      for (const call of [() => blobs.put('default', 'k', 'x'), () => blobs.get('default/k'), () => blobs.adopt('default', 's3://retryd-test/p/default/k')]) {
        const error: unknown = await call().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(BlobStoreUnavailableError);
        expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE', message: expect.stringMatching(/^S3 \w+ in bucket retryd-test failed: .*ECONNREFUSED/) });
        expect((error as { cause: { $metadata: { attempts: number } } }).cause.$metadata.attempts).toBe(3);
      }
    });

    it('counts 5xx and throttling answers as unavailable (retried), 403 on HEAD as a refusal of the ref (not retried)', async () => {
      const server = await answering(503);
      await using blobs = new S3BlobStore({ client: testClient(server.url), bucket: 'retryd-test', prefix: 'p' });
      await expect(blobs.put('default', 'k', 'x')).rejects.toBeInstanceOf(BlobStoreUnavailableError);
      expect(server.requests()).toBe(3);
      server.status = 429;
      await expect(blobs.get('default/k')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
      server.status = 403;
      const before = server.requests();
      expect(await blobs.adopt('default', 's3://retryd-test/p/default/k')).toMatchObject({
        ok: false,
        rule: 'the URL of an existing object that retryd may read',
      });
      expect(server.requests() - before).toBe(1);
      server.status = 400;
      await expect(blobs.get('default/k')).rejects.not.toBeInstanceOf(BlobStoreUnavailableError);
      await server.close();
    });
  });
});

describe('S3RetryStrategy', () => {
  it("waits core's computeDelay of S3_RETRY_POLICY before each retry, and gives up after maxAttempts", async () => {
    const draws = [0.5, 0.25];
    const strategy = new S3RetryStrategy(S3_RETRY_POLICY, () => draws.shift() ?? 0);
    const first = await strategy.acquireInitialRetryToken();
    expect(first.getRetryCount()).toBe(0);
    const second = await strategy.refreshRetryTokenForRetry(first, { errorType: 'TRANSIENT' });
    expect([second.getRetryCount(), second.getRetryDelay()]).toEqual([1, computeDelay(S3_RETRY_POLICY, 1, 0, () => 0.5)]);
    expect(second.getRetryDelay()).toBe(25);
    const third = await strategy.refreshRetryTokenForRetry(second, { errorType: 'THROTTLING' });
    expect([third.getRetryCount(), third.getRetryDelay()]).toEqual([2, 25]);
    await expect(strategy.refreshRetryTokenForRetry(third, { errorType: 'SERVER_ERROR' })).rejects.toThrow();
  });

  it('never retries a client error', async () => {
    const strategy = new S3RetryStrategy();
    await expect(strategy.refreshRetryTokenForRetry(await strategy.acquireInitialRetryToken(), { errorType: 'CLIENT_ERROR' })).rejects.toThrow();
  });
});

describe('--blobs', () => {
  it('names a bucket, a prefix and the S3 client settings', () => {
    expect(parseBlobsUrl('s3://retryd/bodies?endpoint=http://127.0.0.1:9000&region=us-east-1&force_path_style=true')).toEqual({
      kind: 's3',
      bucket: 'retryd',
      prefix: 'bodies',
      endpoint: 'http://127.0.0.1:9000',
      region: 'us-east-1',
      forcePathStyle: true,
    });
    expect(parseBlobsUrl('s3://my.bucket-1')).toEqual({ kind: 's3', bucket: 'my.bucket-1', prefix: '', forcePathStyle: false });
    expect(parseBlobsUrl('s3://b12/a/b/c/')).toMatchObject({ prefix: 'a/b/c' });
    expect(parseBlobsUrl('S3://b12/x?force_path_style=false&region=eu-west-3')).toMatchObject({ prefix: 'x', region: 'eu-west-3', forcePathStyle: false });
  });

  it('refuses bad values with a BlobsUrlError naming --blobs and the rule', () => {
    for (const [url, rule] of [
      ['retryd/bodies', /`--blobs` to be `s3:\/\/bucket\/prefix\?endpoint=/],
      ['file:./blobs', /`--blobs` to be `s3:\/\/bucket/],
      ['s3://', /an S3 bucket/],
      ['s3://My_Bucket/x', /an S3 bucket \(3 to 63 lower-case/],
      ['s3://ab/x', /an S3 bucket/],
      ['s3://a..b/x', /an S3 bucket/],
      ['s3://bucket:9000/x', /without a port \(give the server as \?endpoint=/],
      ['s3://bucket/a//b', /prefix .*none empty, '\.' or '\.\.'/],
      ['s3://bucket/a/../b', /prefix/],
      ['s3://bucket/sp ace', /prefix/],
      ['s3://bucket/x#frag', /no #fragment/],
      ['s3://bucket/x?endpoint=ftp://h', /`endpoint` to be an http or https URL/],
      ['s3://bucket/x?endpoint=not%20a%20url', /`endpoint`/],
      ['s3://bucket/x?endpoint=http://h:9000/?a=1', /`endpoint`.*without credentials, query or fragment/],
      ['s3://bucket/x?region=us east', /`region`/],
      ['s3://bucket/x?force_path_style=yes', /`force_path_style` to be true or false/],
      ['s3://bucket/x?bucket=other', /only the `endpoint`, `region`, `force_path_style` query parameters; got `bucket`/],
      ['s3://bucket/x?region=a&region=b', /`region` once/],
    ] as const) {
      expect(() => parseBlobsUrl(url), url).toThrow(BlobsUrlError);
      expect(() => parseBlobsUrl(url), url).toThrow(rule);
    }
  });

  it('refuses credentials in the URL without repeating them', () => {
    expect(() => parseBlobsUrl('s3://AKIAXXX:hunter2@bucket/x')).toThrow(/no credentials: they come from AWS_ACCESS_KEY_ID/);
    expect(() => parseBlobsUrl('s3://AKIAXXX:hunter2@bucket/x')).toThrow(/^((?!hunter2).)*$/);
    expect(() => parseBlobsUrl('s3://bucket/x?endpoint=http://u:hunter2@h:9000')).toThrow(/^((?!hunter2).)*$/);
  });

  it('needs a region from the URL or the environment', async () => {
    const saved = { region: process.env['AWS_REGION'], fallback: process.env['AWS_DEFAULT_REGION'], config: process.env['AWS_CONFIG_FILE'] };
    delete process.env['AWS_REGION'];
    delete process.env['AWS_DEFAULT_REGION'];
    process.env['AWS_CONFIG_FILE'] = `/nonexistent/${randomUUID()}`;
    try {
      const location = parseBlobsUrl(`s3://retryd-test/x?endpoint=${s3.endpoint}`);
      await expect(openS3BlobStore(location, { client: { credentials: testS3Credentials() } })).rejects.toThrow(/`--blobs` to name a region/);
      process.env['AWS_REGION'] = 'eu-central-1';
      await using blobs = await openS3BlobStore(location, { client: { credentials: testS3Credentials() } });
      expect(await blobs.client.config.region()).toBe('eu-central-1');
    } finally {
      for (const [name, value] of [['AWS_REGION', saved.region], ['AWS_DEFAULT_REGION', saved.fallback], ['AWS_CONFIG_FILE', saved.config]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it('reads an object URL literally, bucket and key', () => {
    expect(parseS3ObjectUrl('s3://b/p/default/a%20b/../c')).toEqual({ bucket: 'b', key: 'p/default/a%20b/../c' });
    expect(parseS3ObjectUrl('s3://b/')).toBeUndefined();
    expect(parseS3ObjectUrl('s3:///k')).toBeUndefined();
  });

  it('keeps the object in S3 as HeadObject sees it', async () => {
    const prefix = freshPrefix();
    await using blobs = await openTestS3BlobStore(s3, prefix);
    await blobs.put('default', 'sized', randomBytes(70_000));
    const head = await s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: `${prefix}/default/sized` }));
    expect(head.ContentLength).toBe(70_000);
  });
});

/** A client for a fake or dead endpoint, with the store's retry strategy and short timeouts. */
function testClient(endpoint: string): S3Client {
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: testS3Credentials(),
    retryStrategy: new S3RetryStrategy(),
    requestHandler: { connectionTimeout: 2_000, requestTimeout: 5_000, throwOnRequestTimeout: true },
  });
}


/** A loopback server that answers every request with `status` (changeable), counting requests. */
async function answering(initial: number): Promise<{ url: string; status: number; requests(): number; close(): Promise<void> }> {
  let count = 0;
  const state = { status: initial };
  const server: Server = createServer((req, res) => {
    count += 1;
    req.resume();
    req.on('end', () => res.writeHead(state.status, { 'content-type': 'application/xml' }).end('<Error><Code>Fake</Code></Error>'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get status() {
      return state.status;
    },
    set status(value: number) {
      state.status = value;
    },
    requests: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
