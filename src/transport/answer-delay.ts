/**
 * The answer delay the loop predicts over (line-link.ts): from the histogram of the last answers'
 * delays [samples], the smallest delay that covers 95 % of them, but never more than one sample past
 * the median.
 *
 * Why the cap: the 95 % point is the right figure for a link whose delays are tight (a 16U2's flushes
 * make them 4 or 5 samples at 1 kHz: the 95 % point is the 5 the answers need). A loaded host can
 * make them two-humped: most answers on time, a tail of late ones (the host's thread held off for
 * tens of ms). The 95 % point then lands in the tail, and the controller
 * predicts the arm's state that far ahead for every answer (predict.ts): 18 samples, 36 ms, at
 * 500 Hz in CI stop 41 (tests/realtime/reconnect.test.ts, the ten pulls, real time, the loop thread's
 * event-loop delay p99 42 ms), where quiet runs of the same test learn 3. Predicting 6 times too far
 * most likely turns the velocity estimate's noise into torque (the proportional gain times the horizon
 * is a derivative gain the tuning never asked for; read from the recording, not reproduced in virtual
 * time): the PID swung between -6.7 and +8.9 N m from one answer to the next, the duty hit its limits, and
 * the arm went 5 deg off its plan (fault:following-error; quiet runs: 3 samples learned, swings of
 * 0.15 N m rms). That load was the tests' own (three boards an earlier test had left
 * running, tests/helpers/owned-children.ts), but a user's busy laptop makes the same tail. A late answer
 * is counted late (`late`) against this delay; the prediction serves the typical answer.
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
