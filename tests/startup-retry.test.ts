// Start-up on a busy machine: FirmataEncoder's attach (src/transport/firmata-setup.ts) and the line
// protocol's handshake (src/transport/line-link.ts) ask again before the sketch or the board is blamed,
// and the error says how long they waited. Virtual time: the boards below answer the Nth attach, or none.
import { Duplex } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { HELLO_TRIES, LineLink } from '../src/transport/line-link.js';
import { ENCODER, FIRMATA } from '../src/protocol/firmata.js';
import type { Wiring } from '../src/protocol/firmata-wiring.js';
import { VirtualClock } from '../src/time/clock.js';
import { driveToEnd } from './helpers/virtual-drive.js';
import { Waiters } from '../src/transport/firmata-io.js';
import { attachEncoders, ATTACH_TRIES, type SetupContext } from '../src/transport/firmata-setup.js';
import type { WatchdogStatus } from '../src/protocol/firmata.js';
import type { FirmataIO } from '../src/transport/johnny-five.js';

/** A board whose FirmataEncoder answers attach number `answerOn` (1-based) of each encoder, or never (0). */
function board(answerOn: number) {
  const clock = new VirtualClock();
  const encoderReplies = new Waiters<number>();
  const sent: number[][] = [];
  const attaches = new Map<number, number>();
  const io = {
    sysexCommand: (bytes: number[]) => {
      sent.push(bytes);
      if (bytes[0] === FIRMATA.ENCODER_DATA && bytes[1] === ENCODER.ATTACH) {
        const n = (attaches.get(bytes[2]!) ?? 0) + 1;
        attaches.set(bytes[2]!, n);
        // the answer (position, one encoder's 5 bytes) 2 ms later, as a board's would come
        if (n === answerOn) clock.setTimer(0.002, () => encoderReplies.emit(6));
      }
    },
  } as unknown as FirmataIO;
  const wiring = {
    sensors: [
      { type: 'encoder', encoder: 0, pinA: 2, pinB: 8 },
      { type: 'encoder', encoder: 1, pinA: 3, pinB: 12 },
    ],
  } as unknown as Wiring;
  const ctx: SetupContext = {
    name: 'mock',
    io,
    clock,
    wiring,
    strings: new Waiters<string>(),
    encoderReplies,
    watchdogReplies: new Waiters<WatchdogStatus>(),
  };
  return { clock, ctx, sent };
}

const drive = driveToEnd;

describe('FirmataEncoder attach on a busy machine', () => {
  it(`an answer to the 3rd attach (the first two missed): attached, auto-report on, ${ATTACH_TRIES} tries allowed`, async () => {
    const b = board(3);
    const r = await drive(b.clock, attachEncoders(b.ctx, 'ConfigurableFirmata 2.10', 500));
    expect(r.ok).toBe(true);
    const attaches = b.sent.filter((s) => s[1] === ENCODER.ATTACH);
    expect(attaches.length).toBe(6); // 3 tries x 2 encoders
    // each attach after a detach of the same number
    expect(b.sent.filter((s) => s[1] === ENCODER.DETACH).length).toBe(6);
    expect(b.sent.at(-1)).toEqual([FIRMATA.ENCODER_DATA, ENCODER.REPORT_AUTO, 1]);
    // two answer times missed, then the answer 2 ms into the third
    expect(b.clock.now()).toBeGreaterThanOrEqual(1.002);
  });

  it('no answer at all: the sketch is blamed only after every try, and the error says how many over how long', async () => {
    const b = board(0);
    const r = await drive(b.clock, attachEncoders(b.ctx, 'ConfigurableFirmata 2.10', 500));
    expect(r.ok).toBe(false);
    if (!r.ok) {
      const m = new RegExp(
        `^mock: ConfigurableFirmata 2\\.10 lists the ENCODER pin mode but sent no encoder position to ${ATTACH_TRIES} attaches over (\\d+) ms .*FirmataEncoder does not answer; check that the sketch registers it`,
      ).exec(r.e.message);
      expect(m, r.e.message).not.toBeNull();
      // the tries' answer times, to the virtual-time step (1 ms) this test advances by
      expect(Number(m![1])).toBeGreaterThanOrEqual(ATTACH_TRIES * 500);
      expect(Number(m![1])).toBeLessThanOrEqual(ATTACH_TRIES * 500 + 5);
    }
    expect(b.sent.filter((s) => s[1] === ENCODER.ATTACH).length).toBe(2 * ATTACH_TRIES);
  });
});

describe('the line-protocol handshake on a busy machine', () => {
  it(`a deadline shorter than ${HELLO_TRIES} hellos still gets ${HELLO_TRIES} hellos before the board is blamed, and the error says how long it waited`, async () => {
    const clock = new VirtualClock();
    const rig = loadRig('rigs/mock-arm.json');
    let hellos = 0;
    // a port where nothing answers; the host's hellos are counted
    const stream = new Duplex({
      read() {},
      write(c: Buffer, _e, cb) {
        hellos += (c.toString().match(/^H/gm) ?? []).length;
        cb();
      },
    });
    // 300 ms: a deadline a host starved for 300 ms would see pass after its first hello
    const link = new LineLink({
      stream,
      name: '/dev/ttyACM9',
      baudRate: 115200,
      clock,
      encoders: rig.encoders,
      watchdogMs: 100,
      handshakeMs: 300,
    });
    const r = await drive(clock, link.open());
    expect(r.ok).toBe(false);
    expect(hellos).toBe(HELLO_TRIES);
    if (!r.ok) {
      const m =
        /^\/dev\/ttyACM9: no twolink handshake within 300 ms at 115200 baud: nothing at all came back.* \(waited (\d+) ms, (\d+) hellos\)$/.exec(
          r.e.message,
        );
      expect(m, r.e.message).not.toBeNull();
      expect(Number(m![2])).toBe(HELLO_TRIES);
      expect(Number(m![1])).toBeGreaterThanOrEqual(HELLO_TRIES * 250); // each hello waits 250 ms for its answer
    }
  });
});
