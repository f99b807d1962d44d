// Issue 34 item 5 over ptys (src/transport/dtr.ts): both serial paths clear the line's HUPCL flag once
// the port is open (read back with `stty -F PATH -a` while it is open), so that closing leaves DTR up
// and the next open does not reset an Uno-class board; a pty has no DTR, so its open reset nothing.
// And a board behind a pty that answers only after its "bootloader" (1.5 s of swallowed hellos, then
// its banner): the run's composition waits for it and says so. A pty cannot reset anything, so the
// bootloader wait is asked for here (LinkOptions.bootloaderMs), as opening a real Uno's port would.
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRig } from '../../src/config/load.js';
import { serveOnStream } from '../../src/mock/binding.js';
import { createPtyPair, type PtyPair } from '../../src/mock/pty.js';
import { compose } from '../../src/run/compose.js';
import { RealClock } from '../../src/time/clock.js';
import { hupclIn } from '../../src/transport/dtr.js';
import type { LinkEvent } from '../../src/transport/link.js';
import { openSerial } from '../../src/transport/open.js';
import { closeStream } from '../../src/transport/stream.js';
import { BootloaderBoard } from '../helpers/bootloader-board.js';

const pairs: PtyPair[] = [];
afterAll(async () => {
  for (const p of pairs) await p.close();
});

const hupcl = (path: string): boolean | undefined => hupclIn(execFileSync('stty', ['-F', path, '-a']).toString());

describe('HUPCL cleared after the open, on both serial paths', () => {
  for (const serial of ['tty', 'serialport'] as const) {
    it(`--serial ${serial}: set before, clear while open; a pty's open raised no DTR`, async () => {
      const pair = await createPtyPair();
      pairs.push(pair);
      const path = pair.paths[1];
      execFileSync('stty', ['-F', path, 'hupcl']); // as a fresh USB serial port's line is
      expect(hupcl(path)).toBe(true);
      const opened = await openSerial(path, 115200, { serial, adapter: '16u2' });
      try {
        expect(hupcl(path)).toBe(false);
        expect(opened.dtr).toBe('none');
      } finally {
        await closeStream(opened.stream);
      }
    });
  }
});

describe('a board in its bootloader behind a pty', () => {
  it('the handshake says it waits for the bootloader, then opens on the banner and the answer', async () => {
    const rig = loadRig('rigs/mock-arm.json');
    const pair = await createPtyPair();
    pairs.push(pair);
    const far = await openSerial(pair.paths[0], rig.link.baudRate, { serial: 'tty' });
    const board = new BootloaderBoard(rig, new RealClock(), 1.5);
    const detach = serveOnStream(board, far.stream);
    const events: LinkEvent[] = [];
    try {
      // handshakeMs 300: alone, the 1.5 s bootloader fails it (tests/dtr.test.ts); 20 s more for the bootloader is a hang guard here, not a figure
      const c = await compose(
        rig,
        { kind: 'port', path: pair.paths[1], serial: 'tty' },
        { time: 'real', link: { handshakeMs: 300, bootloaderMs: 20_000 } },
      );
      c.link.onEvent((e) => events.push(e));
      const identity = await c.link.open();
      expect(identity.firmware).toMatch(/^twolink-mock/);
      expect(board.swallowed).toBeGreaterThan(0);
      expect(events.filter((e) => e.kind === 'waiting').map((e) => (e as { text: string }).text)).toEqual([
        expect.stringMatching(/^waiting for the board's bootloader \(opening \/dev\/pts\/\d+ reset it\) up to \d+ ms \.\.\.$/),
      ]);
      await c.close();
    } finally {
      detach();
      board.dispose();
      await closeStream(far.stream);
    }
  });
});
