// One composition (issue 22): run/compose.ts opens the board of either transport, on the mock in this
// thread in virtual time, and the loop runs on what it gives, Firmata included.
import type { StopReason } from '../src/control/stop.js';
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { runLoop } from '../src/control/runner.js';
import { builtinPath } from '../src/model/builtins.js';
import { compose, TRANSPORTS, transportOf } from '../src/run/compose.js';
import { MOCK_PARTS } from '../src/mock/injections.js';
import { VirtualClock } from '../src/time/clock.js';

/** A reach through `compose` and `runLoop`, nothing else: the loop on the composed link and clock. */
async function reach(rigFile: string): Promise<{ stop: StopReason; rows: number; describe: string; board: string; virtual: boolean }> {
  const rig = loadRig(rigFile);
  const c = await compose(rig, { kind: 'mock' });
  let rows = 0;
  try {
    const r = await c.drive(
      runLoop({
        rig,
        link: c.link,
        clock: c.clock,
        rateHz: rig.control.rateHz,
        feedforward: rig.control.feedforward,
        paths: [builtinPath(rig.arm, 'reach')!],
        boardWatchdog: c.boardWatchdog,
        sink: () => rows++,
        maxSeconds: 30,
      }),
    );
    return { stop: r.stop, rows, describe: c.describe, board: c.board.constructor.name, virtual: c.clock instanceof VirtualClock };
  } finally {
    await c.end.dispose();
  }
}

describe('run/compose', () => {
  it('a virtual-time Firmata reach is done: johnny-five on the Firmata mock, on the virtual clock', async () => {
    const r = await reach('rigs/mock-arm-firmata.json');
    expect(r).toMatchObject({ stop: { kind: 'done' }, board: 'FirmataLink', virtual: true });
    expect(r.describe).toMatch(/^Firmata \(johnny-five\) to the mock rig mock:.* \(this thread, virtual time/);
    expect(r.rows).toBeGreaterThan(333);
  });

  it('a virtual-time line-protocol reach is done on the same path', async () => {
    const r = await reach('rigs/mock-arm.json');
    expect(r).toMatchObject({ stop: { kind: 'done' }, board: 'LineLink', virtual: true });
    expect(r.describe).toMatch(/^line protocol to the mock rig/);
  });

  it('the table names each transport and the parts its mock offers to injections', () => {
    expect(Object.keys(TRANSPORTS).sort()).toEqual(['firmata', 'line']);
    expect(TRANSPORTS.line.parts).toBe(MOCK_PARTS.line);
    expect(TRANSPORTS.firmata.parts).toBe(MOCK_PARTS.firmata);
    expect(transportOf(loadRig('rigs/mock-arm-firmata.json'))).toBe(TRANSPORTS.firmata);
  });

  it('virtual time is refused for a port or a mock in its own thread, before anything opens', async () => {
    const rig = loadRig('rigs/mock-arm.json');
    await expect(compose(rig, { kind: 'port', path: '/dev/null-twolink' }, { time: 'virtual' })).rejects.toThrow(
      'virtual time needs the mock in this thread, not a serial port',
    );
    await expect(compose(rig, { kind: 'mock-thread' }, { time: 'virtual' })).rejects.toThrow("not the mock's own thread");
  });

  it('a Firmata link refuses board-order encoders (a line-protocol handshake), naming the rig file', async () => {
    const rig = loadRig('rigs/mock-arm-firmata.json');
    await expect(compose(rig, { kind: 'mock' }, { link: { encoders: rig.encoders } })).rejects.toThrow(
      `${rig.file}: a Firmata link takes the rig file's encoders`,
    );
  });
});
