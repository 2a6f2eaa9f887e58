import { StoreUrlError } from '../../store/store-url-error.js';
import { PREFIX_RULE } from './keys.js';

/** Checks a key prefix, naming `--store` in the message (the prefix normally comes from its `?prefix=`). */
export function checkPrefix(prefix: string): string {
  if (!PREFIX_RULE.test(prefix)) {
    throw new StoreUrlError(
      `Expected \`--store\` \`prefix\` to be 1 to 64 letters, digits, '.', '_' or '-'; got ${JSON.stringify(prefix)}.`,
    );
  }
  return prefix;
}
