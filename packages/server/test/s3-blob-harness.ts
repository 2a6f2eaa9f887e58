import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { openS3BlobStore, type S3BlobStore } from '../src/blobs/s3-blob-store.js';
import { parseBlobsUrl } from '../src/blobs/s3-blobs-url.js';

// The SDK's credential chain ends at the instance metadata service (a link-local address): never let a test reach
// for it. And its notice that later versions need Node 22 is for operators, not test output.
process.env['AWS_EC2_METADATA_DISABLED'] = 'true';
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

/**
 * The keys s3rver accepts (it checks signatures against them). A new object each time: the SDK writes into the
 * credentials it is given (where they came from), so a frozen or shared one breaks it.
 */
export const testS3Credentials = () => ({ accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' });

/** An S3-compatible server (s3rver) on a loopback port, with its buckets, and a plain client to look from outside. */
export interface TestS3 {
  endpoint: string;
  /** The first bucket it was started with. */
  bucket: string;
  /** A client of the test's own (not the store's), to put callers' objects and look at keys. */
  client: S3Client;
  /** A `--blobs` URL for `bucket` and `prefix` on this server. */
  blobsUrl(prefix: string, bucket?: string): string;
  /** Puts an object as a caller would, and returns its URL (`s3://bucket/key`). */
  callerPuts(key: string, body: Buffer | string, bucket?: string): Promise<string>;
  /** The object's bytes, or undefined when there is none. */
  objectAt(key: string, bucket?: string): Promise<Buffer | undefined>;
  close(): Promise<void>;
}

/** Starts s3rver on 127.0.0.1 with a fresh directory and the given buckets. */
export async function startTestS3(buckets: readonly string[] = ['retryd-test']): Promise<TestS3> {
  const directory = await mkdtemp(join(tmpdir(), 'retryd-s3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: buckets.map((name) => ({ name, configs: [] })),
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: testS3Credentials() });
  const first = buckets[0] ?? 'retryd-test';
  return {
    endpoint,
    bucket: first,
    client,
    blobsUrl: (prefix, bucket = first) => `s3://${bucket}/${prefix}?endpoint=${endpoint}&region=us-east-1&force_path_style=true`,
    callerPuts: async (key, body, bucket = first) => {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
      return `s3://${bucket}/${key}`;
    },
    objectAt: async (key, bucket = first) => {
      try {
        const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        return Buffer.from((await answer.Body?.transformToByteArray()) ?? []);
      } catch (error) {
        if ((error as { name?: string }).name === 'NoSuchKey') return undefined;
        throw error;
      }
    },
    close: async () => {
      client.destroy();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** An S3 blob store on the test server, under `prefix`, with the test credentials. */
export function openTestS3BlobStore(s3: TestS3, prefix: string, bucket?: string): Promise<S3BlobStore> {
  return openS3BlobStore(parseBlobsUrl(s3.blobsUrl(prefix, bucket)), { client: { credentials: testS3Credentials() } });
}

/** A loopback port with nothing listening on it: a dead S3 endpoint. */
export async function closedLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
