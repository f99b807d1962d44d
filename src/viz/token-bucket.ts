/**
 * A token bucket (the live view's rate limits, viz/live.ts): it holds at most `burst` tokens, gains
 * `perSecond` a second, and a request takes its cost or is refused (nothing taken). The clock is the
 * caller's (milliseconds, monotonic: performance.now()), so a test drives it without waiting.
 */
export class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(
    readonly burst: number,
    readonly perSecond: number,
    now: number,
  ) {
    if (!(burst > 0 && Number.isFinite(burst) && perSecond > 0 && Number.isFinite(perSecond)))
      throw new Error(`a token bucket needs a positive finite burst and rate (got ${burst}, ${perSecond}/s)`);
    this.tokens = burst;
    this.at = now;
  }

  /** Takes `cost` tokens at `now` [ms]; false (nothing taken) if the bucket holds fewer. */
  take(cost: number, now: number): boolean {
    if (now > this.at) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) * this.perSecond) / 1000);
      this.at = now;
    }
    if (this.tokens < cost) return false;
    this.tokens -= cost;
    return true;
  }

  /** Tokens held at the last take. */
  get level(): number {
    return this.tokens;
  }
}
