/** Another spool holds the directory: this process's (not closed yet) or a live process's, named by its pid. */
export class SpoolLockedError extends Error {
  override readonly name = 'SpoolLockedError';
  readonly code = 'SPOOL_LOCKED';
}

/**
 * A line of the journal, not its last, is not a record: the file was changed by something other than a spool. The
 * spool does not guess: move the file aside to start afresh, or mend the line it names.
 */
export class SpoolJournalError extends Error {
  override readonly name = 'SpoolJournalError';
  readonly code = 'SPOOL_JOURNAL_CORRUPT';
}
