/**
 * Throws for a record field that every task holds but a stored task lacks: its keys are of another layout than this
 * version's, and reading on would invent a value.
 */
export function missingField(name: string): never {
  throw new Error(`A stored task has no ${name}: its keys are not in this version's layout.`);
}
