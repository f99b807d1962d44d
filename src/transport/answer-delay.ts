/**
 * The answer delay the loop predicts over (line-link.ts): from the histogram of the last answers'
 * delays [samples], the smallest delay that covers 95 % of them, but never more than one sample past
 * the median.
 *
 * Why the cap: the 95 % point is the right figure for a link whose delays are tight (a 16U2's flushes
 * make them 4 or 5 samples at 1 kHz: the 95 % point is the 5 the answers need). A loaded host makes
 * them two-humped: most answers still apply in 3 samples, a tail of late ones (the host's thread
 * held off for tens of ms) in 15-20. The 95 % point then lands in the tail, and the controller
 * predicts the arm's state that far ahead for every answer (predict.ts): 18 samples, 36 ms, at
 * 500 Hz in CI stop 41 (tests/realtime/reconnect.test.ts, the ten pulls, real time, the loop thread's
 * event-loop delay p99 42 ms), where the typical answer applied after 3. Predicting 12 times too far
 * turns the velocity estimate's noise into torque (the proportional gain times the horizon is a
 * derivative gain the tuning never asked for) and credits an answer that already applied once more:
 * the PID swung between -6.7 and +8.9 N m from one answer to the next, the duty hit its limits, and
 * the arm went 5 deg off its plan (fault:following-error; the same recording's quiet runs: 3 samples
 * learned, swings of 0.15 N m rms). A late answer is counted late (`late`) against this delay; the
 * prediction serves the typical answer.
 */

/** The share of the answers the delay covers when the delays are tight. */
export const ANSWER_DELAY_COVER = 0.95;
/** How far past the median delay the learned delay may go [samples]. */
export const ANSWER_DELAY_PAST_MEDIAN = 1;

/**
 * The learned delay [samples] from `hist` (hist[d]: how many of the last `n` answers applied `d`
 * samples after their sample, d >= 1). `n` > 0.
 */
export function answerDelayOf(hist: ArrayLike<number>, n: number): number {
  let c = 0;
  let median = 0;
  for (let k = 1; k < hist.length; k++) {
    c += hist[k]!;
    if (!median && c >= 0.5 * n) median = k;
    if (c >= ANSWER_DELAY_COVER * n) return Math.min(k, median + ANSWER_DELAY_PAST_MEDIAN);
  }
  return hist.length - 1;
}
