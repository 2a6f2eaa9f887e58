/** The `--store` value used when none is given: a SQLite file in the working directory. */
export const DEFAULT_STORE_URL = 'sqlite:./retryd.db';
