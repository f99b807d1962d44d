/**
 * Numbers printed beside a bound they crossed. Rounded to a fixed number of decimals, a value just past
 * a bound prints as the bound itself ("angle 0.0 deg is outside the joint limits -160..0 deg"); these
 * give the value as many decimals as it takes to show which side it is on, and the bounds without
 * rounding them inward.
 */

/**
 * A bound as people write it, not rounded: 10 significant digits (enough to undo a deg -> rad -> deg
 * round trip), no trailing zeros (-160, 0, 2.5, -0.0315).
 */
export function boundText(bound: number): string {
  if (!Number.isFinite(bound)) return String(bound);
  const s = Number(bound.toPrecision(10)).toString();
  return s === '-0' ? '0' : s;
}

/**
 * `value` with at least `decimals` decimals, and more (up to 9) while it would print as a number on
 * the wrong side of `bound`: `above` when the value exceeded the bound, `below` when it fell under it.
 * A value that did not cross its bound prints with `decimals`.
 */
export function beyondText(value: number, bound: number, side: 'above' | 'below', decimals = 1): string {
  if (!Number.isFinite(value)) return String(value);
  const crossed = side === 'above' ? value > bound : value < bound;
  const shown = Number(boundText(bound));
  for (let d = decimals; d <= 9; d++) {
    const s = value.toFixed(d);
    const n = Number(s);
    if (!crossed || (side === 'above' ? n > shown : n < shown)) return s === '-0' || /^-0\.0*$/.test(s) ? s.slice(1) : s;
  }
  return String(value);
}

/**
 * A value outside `min..max`: "0.004 deg is outside -160..0 deg" reads as `${value} ... ${range}`.
 * Returns the value's text (decimals enough to show it is outside) and the range's ("-160..0").
 */
export function outsideText(value: number, min: number, max: number, decimals = 1): { value: string; range: string } {
  const text = value < min ? beyondText(value, min, 'below', decimals) : beyondText(value, max, 'above', decimals);
  const range = { value: text, range: `${boundText(min)}..${boundText(max)}` };
  const shown = Number(text);
  const [lo, hi] = [Number(boundText(min)), Number(boundText(max))];
  if (!(value < min || value > max) || shown < lo || shown > hi) return range;
  // A crossing finer than the bound's 10 digits (the bound printed rounded outward past the value):
  // both in full (the shortest text that reads back as the number), which keeps the sides apart.
  return value < min
    ? { value: String(value), range: `${String(min)}..${boundText(max)}` }
    : { value: String(value), range: `${boundText(min)}..${String(max)}` };
}
