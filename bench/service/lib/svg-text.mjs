// What every hand-written SVG chart of the benchmarks needs: escaped text and axis steps that read well.

/** Escapes text for SVG content and attribute values. */
export const esc = (s) => String(s).replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

/** A "nice" step for about `count` ticks over `max` (1, 2 or 5 × a power of ten). */
export function tickStep(max, count) {
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? raw;
}
