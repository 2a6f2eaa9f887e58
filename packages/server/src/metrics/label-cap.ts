/** The label value every value past a {@link LabelCap}'s limit folds into. */
export const OTHER_LABEL = 'other';

/**
 * Bounds the values one label takes, so that a series per value cannot grow without end: the first `limit` distinct
 * values keep their own label, every later one reads as {@link OTHER_LABEL}. Values are never forgotten (a series,
 * once exported, stays), so which values got a place is first come, first served, per process.
 *
 * @example
 * ```ts
 * const targets = new LabelCap(2);
 * targets.label('https://a.example'); // 'https://a.example'
 * targets.label('https://b.example'); // 'https://b.example'
 * targets.label('https://c.example'); // 'other'
 * ```
 */
export class LabelCap {
  private readonly kept = new Set<string>();

  /** @param limit Most distinct values kept, at least 1. */
  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`Expected \`limit\` to be an integer >= 1, got ${String(limit)}.`);
  }

  /** `value` itself while it is one of the first `limit` distinct values seen, else {@link OTHER_LABEL}. */
  label(value: string): string {
    if (this.kept.has(value)) return value;
    // A real value spelled `other` would merge with the folded ones: it is one of them.
    if (this.kept.size >= this.limit || value === OTHER_LABEL) return OTHER_LABEL;
    this.kept.add(value);
    return value;
  }
}
