/**
 * Where a thread's time went when it was late: garbage-collection pauses (PerformanceObserver 'gc')
 * and the event loop's own delay (monitorEventLoopDelay). One per thread; the bench and the summary
 * report it next to the stalls, so that a stall can be put down to a cause (or to the scheduler, when
 * neither explains it).
 */
import { monitorEventLoopDelay, PerformanceObserver, type IntervalHistogram } from 'node:perf_hooks';

export interface StallReport {
  /** Garbage-collection pauses: how many, the longest and their sum [ms]. */
  gcCount: number;
  gcMaxMs: number;
  gcTotalMs: number;
  /** The event loop's delay (a block of the thread, whatever its cause): max and p99 [ms]. */
  loopDelayMaxMs: number;
  loopDelayP99Ms: number;
}

export class StallMonitor {
  private gcCount = 0;
  private gcMax = 0;
  private gcTotal = 0;
  private readonly obs: PerformanceObserver;
  private readonly delay: IntervalHistogram;

  constructor() {
    this.obs = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        this.gcCount++;
        this.gcTotal += e.duration;
        if (e.duration > this.gcMax) this.gcMax = e.duration;
      }
    });
    this.obs.observe({ entryTypes: ['gc'] });
    this.delay = monitorEventLoopDelay({ resolution: 5 });
    this.delay.enable();
  }

  report(): StallReport {
    const r2 = (x: number): number => Math.round(x * 100) / 100;
    return {
      gcCount: this.gcCount,
      gcMaxMs: r2(this.gcMax),
      gcTotalMs: r2(this.gcTotal),
      loopDelayMaxMs: r2(this.delay.max / 1e6),
      loopDelayP99Ms: r2(this.delay.percentile(99) / 1e6),
    };
  }

  stop(): StallReport {
    const r = this.report();
    this.obs.disconnect();
    this.delay.disable();
    return r;
  }
}
