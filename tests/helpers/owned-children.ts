// The child processes a realtime test starts (rigs, socat, host runs), killed when their owner ends:
// one started inside a test when that test ends (tests/helpers/children-setup.ts, afterEach), one
// started in a beforeAll when its file ends (afterAll). A test that stops its own children first
// loses nothing; one that fails before its stop, or forgets the last board it brought back, no longer
// leaves a real-time rig running beside the next tests (CI stop 41: three boards left by
// reconnect.test.ts's first tests, one a simavr image at ~70 % of a core, ran through its ten pulls,
// whose host loop's event-loop delay p99 was 42 ms against 7 without them).
import type { ChildProcess } from 'node:child_process';
import { expect } from 'vitest';

interface Owned {
  child: ChildProcess;
  /** Started with `detached: true`: its whole process group is killed. */
  group: boolean;
}

const perTest: Owned[] = [];
const perFile: Owned[] = [];

/** Registers `child` with the test under way (or, outside a test, the file); returns it. */
export function own<C extends ChildProcess>(child: C, o: { group?: boolean } = {}): C {
  (expect.getState().currentTestName === undefined ? perFile : perTest).push({ child, group: o.group ?? false });
  return child;
}

function running(c: ChildProcess): boolean {
  return c.exitCode === null && c.signalCode === null;
}

/** SIGKILLs every child of `list` still running (its group if it has one), and empties the list. */
function killAll(list: Owned[]): number {
  let n = 0;
  for (const { child, group } of list.splice(0)) {
    if (!running(child)) continue;
    n++;
    try {
      if (group && child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      else child.kill('SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  }
  return n;
}

/** Kills the children of the test that just ended; how many were still running. */
export const killTestChildren = (): number => killAll(perTest);
/** Kills the children of the file (and any test's left). */
export const killFileChildren = (): number => killAll(perTest) + killAll(perFile);
