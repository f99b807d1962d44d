/**
 * How many samples a chunk of the board's bytes usually brings: a USB adapter holds the bytes and
 * delivers several samples at once (a 16U2 every 4.096 ms). Learned from the chunks themselves, so that
 * it holds for any adapter; the loop (src/control/sample-clock.ts) and the line link (its clock
 * offset) tell a chunk the host read on time from one it read late by it.
 *
 * The link's usual burst [samples a chunk of bytes brings]: the smallest size that covers 95 % of the
 * last 256 chunks (as the link learns its answer delay), plus one: a burst straddles one more sample
 * now and then (a 16U2 flushes every 4.096 ms: at 1 kHz four samples, one time in 24 five). So 2 on a
 * pty or a native USB board at 500 Hz, 5 behind a 16U2 at 1 kHz. Chunks larger than that were read
 * late by the host (several bursts at once). Until 16 chunks are known, the largest seen plus one.
 */
export class BurstSizes {
  private static readonly MAX = 64;
  private readonly hist = new Int32Array(BurstSizes.MAX + 1);
  private readonly ring = new Int8Array(256);
  private n = 0;

  /** Records a chunk of `size` samples; returns the usual burst, this chunk included. */
  add(size: number): number {
    const s = Math.min(size, BurstSizes.MAX);
    const i = this.n++ & 255;
    if (this.n > 256) this.hist[this.ring[i]!]!--;
    this.ring[i] = s;
    this.hist[s]!++;
    const n = Math.min(this.n, 256);
    const cover = n < 16 ? n : 0.95 * n;
    let c = 0;
    for (let k = 1; k <= BurstSizes.MAX; k++) {
      c += this.hist[k]!;
      if (c >= cover) return k + 1;
    }
    return BurstSizes.MAX;
  }
}
