/** A `--store` / `RETRYD_STORE` value that names no store retryd can open; the message names the flag and the forms. */
export class StoreUrlError extends Error {
  readonly code = 'INVALID_STORE_URL';
  constructor(message: string) {
    super(message);
    this.name = 'StoreUrlError';
  }
}
