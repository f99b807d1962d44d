// The answer delay the loop predicts over (src/transport/answer-delay.ts): the 95 % point of the last
// answers' delays where they are tight, at most one sample past their median where a loaded host's
// late answers make a tail (CI stop 41: 18 samples learned where quiet runs learn 3).
import { describe, expect, it } from 'vitest';
import { ANSWER_DELAY_COVER, ANSWER_DELAY_PAST_MEDIAN, answerDelayOf } from '../src/transport/answer-delay.js';
import { MAX_DELAY_SAMPLES } from '../src/transport/link.js';

/** A histogram of delays (index: samples) from `counts` ({ delay: how many }). */
function hist(counts: Record<number, number>): { h: Int32Array; n: number } {
  const h = new Int32Array(MAX_DELAY_SAMPLES + 1);
  let n = 0;
  for (const [d, c] of Object.entries(counts)) {
    h[Number(d)] = c;
    n += c;
  }
  return { h, n };
}

describe('answerDelayOf', () => {
  it('pins the rule: 95 % covered, at most one sample past the median', () => {
    expect(ANSWER_DELAY_COVER).toBe(0.95);
    expect(ANSWER_DELAY_PAST_MEDIAN).toBe(1);
  });

  it('one delay: that delay', () => {
    const { h, n } = hist({ 3: 256 });
    expect(answerDelayOf(h, n)).toBe(3);
  });

  it("tight delays (a 16U2's flushes, 4 or 5 samples at 1 kHz): the 95 % point, 5, as before the cap", () => {
    const { h, n } = hist({ 4: 150, 5: 106 });
    expect(answerDelayOf(h, n)).toBe(5);
    // 5 % or fewer past 4: 4 covers them
    const few = hist({ 4: 244, 5: 12 });
    expect(answerDelayOf(few.h, few.n)).toBe(4);
  });

  it("a loaded host's tail (most answers in 3 samples, 12 % in 18): one past the median, 4, not 18", () => {
    const { h, n } = hist({ 3: 225, 18: 31 });
    expect(answerDelayOf(h, n)).toBe(4);
    // without the cap the 95 % point would be 18: the tail is what the 95 % point lands in
    let c = 0;
    let p95 = 0;
    for (let k = 1; k < h.length && !p95; k++) if ((c += h[k]!) >= 0.95 * n) p95 = k;
    expect(p95).toBe(18);
  });

  it('a link that is slow for most answers follows them: the median moved, so does the delay', () => {
    const { h, n } = hist({ 3: 60, 17: 100, 18: 96 });
    expect(answerDelayOf(h, n)).toBe(18);
  });
});
