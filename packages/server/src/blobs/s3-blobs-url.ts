/** A `--blobs` / `RETRYD_BLOBS` value that names no blob store retryd can open; the message names the flag and the rule. */
export class BlobsUrlError extends Error {
  readonly code = 'INVALID_BLOBS_URL';
  constructor(message: string) {
    super(message);
    this.name = 'BlobsUrlError';
  }
}

/** Where `--blobs` puts large bodies: a bucket, and a key prefix inside it. */
export interface S3BlobsLocation {
  kind: 's3';
  bucket: string;
  /** The key prefix, without a leading or trailing `/`; `''` puts objects at `<tenant>/<key>`. */
  prefix: string;
  /** An S3-compatible server (`http://127.0.0.1:9000`); absent, AWS's own endpoint for the region. */
  endpoint?: string;
  /** Absent: the SDK's default chain (`AWS_REGION`, the shared config file). */
  region?: string;
  /** Requests go to `endpoint/bucket/key` rather than `bucket.endpoint/key` (most S3-compatible servers want it). */
  forcePathStyle: boolean;
}

/** The form `--blobs` takes, for messages. */
export const BLOBS_URL_FORM =
  '`s3://bucket/prefix?endpoint=http://127.0.0.1:9000&region=us-east-1&force_path_style=true` (the query is optional)';

/** The parameters `--blobs` takes after `?`. */
const PARAMETERS = ['endpoint', 'region', 'force_path_style'] as const;

// S3's rule for bucket names: 3 to 63 lower-case letters, digits, '.' and '-', starting and ending with a letter or digit.
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
// Characters AWS lists as safe in object keys; a prefix is made of them, in '/'-separated segments.
const KEY_SEGMENT = /^[A-Za-z0-9!_.*'()-]+$/;
const REGION = /^[A-Za-z0-9-]{1,64}$/;
/** Longest key prefix; S3 keys hold at most 1024 bytes, and the tenant and key still need room. */
const MAX_PREFIX = 512;

function fail(rule: string): never {
  throw new BlobsUrlError(`Expected \`--blobs\` ${rule}.`);
}

/**
 * Parses a `--blobs` URL. Credentials never appear in it: the SDK takes them from `AWS_ACCESS_KEY_ID` /
 * `AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN`), or its default chain (shared files, SSO, web identity,
 * container and instance roles). The path is taken literally (no `.`/`..` resolution, no percent-decoding).
 *
 * @example
 * ```ts
 * parseBlobsUrl('s3://retryd/bodies?endpoint=http://127.0.0.1:9000&force_path_style=true');
 * // { kind: 's3', bucket: 'retryd', prefix: 'bodies', endpoint: 'http://127.0.0.1:9000', forcePathStyle: true }
 * ```
 */
export function parseBlobsUrl(url: string): S3BlobsLocation {
  const match = /^s3:\/\/([^/?#]*)([^?#]*)(?:\?([^#]*))?(#.*)?$/i.exec(url);
  if (match === null) fail(`to be ${BLOBS_URL_FORM}; got ${JSON.stringify(url)}`);
  const [, authority = '', path = '', query = '', fragment] = match;
  if (authority.includes('@')) {
    fail('to hold no credentials: they come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or the AWS SDK\'s default chain');
  }
  if (fragment !== undefined) fail(`to have no #fragment; got ${JSON.stringify(url)}`);
  if (authority.includes(':')) {
    fail(`to name a bucket without a port (give the server as ?endpoint=http://host:port); got ${JSON.stringify(authority)}`);
  }
  if (!BUCKET.test(authority) || authority.includes('..')) {
    fail(`to name an S3 bucket (3 to 63 lower-case letters, digits, '.' and '-') after s3://; got ${JSON.stringify(authority)}`);
  }
  const location: S3BlobsLocation = { kind: 's3', bucket: authority, prefix: parsePrefix(path), forcePathStyle: false };
  const params = new URLSearchParams(query);
  for (const name of new Set(params.keys())) {
    if (!(PARAMETERS as readonly string[]).includes(name)) {
      fail(`to take only the ${PARAMETERS.map((p) => `\`${p}\``).join(', ')} query parameters; got \`${name}\``);
    }
    if (params.getAll(name).length > 1) fail(`to give \`${name}\` once`);
  }
  const endpoint = params.get('endpoint');
  if (endpoint !== null) location.endpoint = parseEndpoint(endpoint);
  const region = params.get('region');
  if (region !== null) {
    if (!REGION.test(region)) fail(`\`region\` to be a region name such as us-east-1; got ${JSON.stringify(region)}`);
    location.region = region;
  }
  const pathStyle = params.get('force_path_style');
  if (pathStyle !== null) {
    if (pathStyle !== 'true' && pathStyle !== 'false') fail(`\`force_path_style\` to be true or false; got ${JSON.stringify(pathStyle)}`);
    location.forcePathStyle = pathStyle === 'true';
  }
  return location;
}

function parsePrefix(path: string): string {
  const prefix = path.replace(/^\//, '').replace(/\/$/, '');
  if (prefix === '') return '';
  const segments = prefix.split('/');
  const plain = segments.every((s) => KEY_SEGMENT.test(s) && s !== '.' && s !== '..');
  if (!plain || prefix.length > MAX_PREFIX) {
    fail(
      `prefix (after the bucket) to be at most ${MAX_PREFIX} characters in '/'-separated segments of letters, digits ` +
        `and !_.*'()-, none empty, '.' or '..'; got ${JSON.stringify(prefix)}`,
    );
  }
  return prefix;
}

function parseEndpoint(raw: string): string {
  const rule = '`endpoint` to be an http or https URL without credentials, query or fragment, e.g. http://127.0.0.1:9000';
  if (!URL.canParse(raw)) fail(`${rule}; got ${JSON.stringify(raw)}`);
  const endpoint = new URL(raw);
  if (endpoint.protocol !== 'http:' && endpoint.protocol !== 'https:') fail(`${rule}; got ${JSON.stringify(endpoint.protocol)}`);
  if (endpoint.username !== '' || endpoint.password !== '') fail(rule);
  if (endpoint.search !== '' || endpoint.hash !== '') fail(`${rule}; got ${JSON.stringify(raw)}`);
  return endpoint.href.replace(/\/$/, '');
}

/**
 * Splits an object URL, `s3://bucket/key`, taking the key literally (as the AWS CLI does: no percent-decoding and
 * no `.`/`..` resolution). Undefined for anything else.
 *
 * @example
 * ```ts
 * parseS3ObjectUrl('s3://retryd/bodies/default/order-1.json'); // { bucket: 'retryd', key: 'bodies/default/order-1.json' }
 * ```
 */
export function parseS3ObjectUrl(url: string): { bucket: string; key: string } | undefined {
  const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(url);
  if (match === null) return undefined;
  const [, bucket = '', key = ''] = match;
  return { bucket, key };
}
