import { constants } from 'node:zlib';
import fastifyCompress from '@fastify/compress';
import type { FastifyInstance } from 'fastify';

/**
 * Smallest answer compressed, in bytes: 1 KiB. Below it the saving is a few hundred bytes at best, less than the
 * CPU and the latency it costs; a task, a problem or a health probe stays as it is.
 */
export const COMPRESS_THRESHOLD_BYTES = 1024;

/**
 * Brotli's quality for answers made per request: 4 compresses about as fast as gzip's default and smaller; the
 * default, 11, is meant for files compressed once and costs tens of times more CPU.
 */
const BROTLI_QUALITY = 4;

/**
 * Compresses answers of {@link COMPRESS_THRESHOLD_BYTES} or more when the client asks (`Accept-Encoding`: br, gzip or
 * deflate, in that order of preference): the console's files, `/openapi.json`, long JSON listings, `/metrics`
 * (Prometheus asks for gzip). An answer is sent as is to a client that does not ask, and with `Vary: Accept-Encoding`
 * either way. Request bodies are never decompressed: a small compressed body could unpack past the body limit.
 *
 * Registered before the routes: it applies to every route registered after it.
 */
export async function installCompression(app: FastifyInstance): Promise<void> {
  await app.register(fastifyCompress, {
    globalCompression: true,
    globalDecompression: false,
    threshold: COMPRESS_THRESHOLD_BYTES,
    encodings: ['br', 'gzip', 'deflate'],
    brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } },
  });
}
