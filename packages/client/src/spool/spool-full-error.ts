/** The spool limit a {@link SpoolFullError} names. */
export type SpoolLimit = 'maxEntries' | 'maxBytes';

/**
 * Thrown instead of spooling a call that would take the spool past one of its limits: the call is not kept anywhere,
 * and the caller is told so (nothing is dropped silently). `cause` is why the call could not be handed to retryd.
 */
export class SpoolFullError extends Error {
  override readonly name = 'SpoolFullError';
  readonly code = 'SPOOL_FULL';

  /**
   * @param limit - the option that was reached
   * @param max - its value
   * @param held - what the spool holds of it now (entries waiting and set aside, or their bytes)
   */
  constructor(
    readonly limit: SpoolLimit,
    readonly max: number,
    readonly held: number,
    options: { cause?: unknown; adding: number },
  ) {
    const what = limit === 'maxEntries' ? 'entries' : 'bytes';
    super(
      `the spool is full: it holds ${held} ${what} (waiting and set aside) and ${limit} is ${max}, so this call ` +
        `(${options.adding} ${what}) was not kept; it empties as retryd takes the waiting entries, or discard the ones ` +
        `set aside (discardDead), or raise ${limit}`,
      { cause: options.cause },
    );
  }
}
