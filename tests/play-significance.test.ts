import { describe, expect, it } from 'vitest';
import { noPlayFound, PLAY_MIN_DEG, PLAY_SIGMAS, PLAY_STD_MAX_DEG, playSignificant } from '../src/identify/flaws.js';
import type { SweepFigures } from '../src/identify/sweep.js';

/** A sweep's figures with the play `playDeg` +- `playStdDeg` (the rest does not enter the play's tests). */
function fig(playDeg: number, playStdDeg: number): SweepFigures {
  return {
    joint: 0,
    playDeg,
    playStdDeg,
    coulombNm: [0.05, 0.05],
    viscousNms: 0.01,
    breakawayNm: [0.1, 0.1],
    starts: [2, 2],
    gravityScale: 1,
    inertia: 0.003,
    residualRmsNm: 0.001,
    rows: 1000,
  };
}

describe('the play written by setup and identify: only one significantly above zero', () => {
  it('pins the constants (a floor of one to two encoder counts, a 3-sigma test)', () => {
    expect(PLAY_MIN_DEG).toBe(0.2);
    expect(PLAY_SIGMAS).toBe(3);
    expect(PLAY_STD_MAX_DEG).toBe(0.3);
  });
  it('the ideal mock (no play in its plant): -0.01 +- 0.05 and 0.05 +- 0.06 deg are no play found, not written', () => {
    for (const f of [fig(-0.0137, 0.0545), fig(0.0465, 0.0581)]) {
      expect(playSignificant(f)).toBe(false);
      expect(noPlayFound(f)).toBe(true);
    }
  });
  it('below the floor, or within 3 standard deviations of zero, is not written', () => {
    expect(playSignificant(fig(0.19, 0.01))).toBe(false);
    expect(playSignificant(fig(0.5, 0.2))).toBe(false);
    expect(noPlayFound(fig(0.5, 0.2))).toBe(true);
  });
  it("the flawed rig's 1.5 deg play, well determined, is written", () => {
    expect(playSignificant(fig(1.5, 0.1))).toBe(true);
    expect(noPlayFound(fig(1.5, 0.1))).toBe(false);
  });
  it('an undetermined play (spread above PLAY_STD_MAX_DEG) is neither written nor called absent; a non-finite one is neither', () => {
    expect(playSignificant(fig(2, 0.5))).toBe(false);
    expect(noPlayFound(fig(2, 0.5))).toBe(false);
    expect(playSignificant(fig(Number.NaN, 0.1))).toBe(false);
    expect(noPlayFound(fig(Number.NaN, 0.1))).toBe(false);
  });
});
