/**
 * What a function allocates on the V8 heap per call, counted, not timed: the heap's used size after
 * a window of calls less before it, plus what each garbage collection inside the window freed (the
 * GC profiler, node:v8 GCProfiler, reports every collection's heap before and after, synchronously).
 * Node 20 has no allocation counter (`total_allocated_bytes` is not in its getHeapStatistics), and
 * this sum is one: nothing else runs on the thread during a window, so the only other changes are
 * V8's own (optimized code installed, concurrent sweeping), which is why the least of several
 * windows is taken, after a warm-up that lets the optimizing compiler see the calls.
 *
 * What is left when the source allocates nothing: V8 boxes a floating-point number passed to or
 * returned from a call it did not inline (a 16-byte heap number); which calls it inlines depends on
 * its budget, so a few of those per call remain and vary from build to build.
 */
import { GCProfiler, getHeapStatistics } from 'node:v8';

/** Bytes per call [B], and the collections in that window. */
export interface AllocationCount {
  bytesPerCall: number;
  gcs: number;
}

export interface AllocationWindows {
  /** Calls before the first window. @default 50_000 */
  warmup?: number;
  /** Calls per window. @default 10_000 */
  calls?: number;
  /** Windows at most. @default 20 */
  windows?: number;
  /** Stop at the first window at or below this [B per call]. @default 0 */
  enoughBytes?: number;
}

/** One window: calls of `f`, and what they allocated. */
function window(f: () => void, calls: number): AllocationCount {
  const profiler = new GCProfiler();
  profiler.start();
  const before = getHeapStatistics().used_heap_size;
  for (let i = 0; i < calls; i++) f();
  const after = getHeapStatistics().used_heap_size;
  const gcs = profiler.stop().statistics;
  const freed = gcs.reduce((s, g) => s + g.beforeGC.heapStatistics.usedHeapSize - g.afterGC.heapStatistics.usedHeapSize, 0);
  return { bytesPerCall: (after - before + freed) / calls, gcs: gcs.length };
}

/** The least a window of calls of `f` allocated, per call (see the top). */
export function allocationPerCall(f: () => void, o: AllocationWindows = {}): AllocationCount {
  const { warmup = 50_000, calls = 10_000, windows = 20, enoughBytes = 0 } = o;
  for (let i = 0; i < warmup; i++) f();
  let best: AllocationCount = { bytesPerCall: Infinity, gcs: 0 };
  for (let w = 0; w < windows && best.bytesPerCall > enoughBytes; w++) {
    const c = window(f, calls);
    if (c.bytesPerCall < best.bytesPerCall) best = c;
  }
  return best;
}
