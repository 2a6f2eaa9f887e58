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

/**
 * A {@link LabelCap} for each tenant: each tenant's first `limit` distinct values keep their own label and its later
 * ones read as {@link OTHER_LABEL}, whatever the other tenants use. So one tenant naming many targets (or policies)
 * folds only its own into `other`; every other tenant's keep their labels. Tenants are no label: two tenants' values
 * that are spelled alike share a series, as before. The series of a label grow with the tenants, at most `limit` each.
 *
 * @example
 * ```ts
 * const targets = new TenantLabelCap(1);
 * targets.label('a', 'https://one.example'); // 'https://one.example'
 * targets.label('a', 'https://two.example'); // 'other': tenant a's one place is taken
 * targets.label('b', 'https://two.example'); // 'https://two.example': tenant b has its own place
 * ```
 */
export class TenantLabelCap {
  private readonly tenants = new Map<string, LabelCap>();

  /** @param limit Most distinct values kept for each tenant, at least 1. */
  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`Expected \`limit\` to be an integer >= 1, got ${String(limit)}.`);
  }

  /** `value` itself while it is one of the first `limit` distinct values `tenantId` used, else {@link OTHER_LABEL}. */
  label(tenantId: string, value: string): string {
    let cap = this.tenants.get(tenantId);
    if (cap === undefined) {
      cap = new LabelCap(this.limit);
      this.tenants.set(tenantId, cap);
    }
    return cap.label(value);
  }
}
