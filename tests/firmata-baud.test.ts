// `--baud` (issue 13, item 3): the stream opens at the override and the Firmata link times the wire
// with it too (the sampling interval it can keep, the ack inference), not with the rig file's baud.
import { afterEach, describe, expect, it } from 'vitest';
import { createFirmataMock } from '../src/mock/firmata-mock.js';
import { VirtualClock } from '../src/time/clock.js';
import { clearFirmataSysexHandlers, createFirmataLink, type FirmataLink } from '../src/transport/firmata-link.js';
import { firmataRig, pumpUntil } from './helpers/firmata.js';

const opened: { link: FirmataLink; clock: VirtualClock; dispose: () => void }[] = [];
afterEach(async () => {
  for (const o of opened.splice(0)) {
    await pumpUntil(o.clock, o.link.close()).catch(() => {});
    o.dispose();
  }
  clearFirmataSysexHandlers();
});

/**
 * A board whose sketch runs at `baud` (the rig file still says 57600), the stream opened at `baud`, and
 * a link made by createFirmataLink from the rig file with the override, as openTarget makes it; opened.
 */
async function linkAt(baud: number | undefined): Promise<FirmataLink> {
  const rig = firmataRig();
  const clock = new VirtualClock();
  const mock = createFirmataMock(rig, clock, baud === undefined ? {} : { boardBaudRate: baud });
  const stream = await mock.openStream(baud ?? rig.link.baudRate);
  const link = createFirmataLink(rig, stream, mock.path, clock, baud === undefined ? {} : { baudRate: baud });
  opened.push({ link, clock, dispose: () => mock.dispose() });
  await pumpUntil(clock, link.open());
  await pumpUntil(clock, link.startSampling(1000));
  return link;
}

describe('createFirmataLink with a baud override', () => {
  it('the rig file says 57600: a 1 kHz request keeps 3 ms (13 bytes of report need 2.26 ms on the wire)', async () => {
    expect(firmataRig().link.baudRate).toBe(57600);
    const link = await linkAt(undefined);
    expect(link.samplingIntervalMs).toBe(3);
  });

  it('--baud 115200: the link times the wire at 115200 and keeps 2 ms (1.13 ms on the wire)', async () => {
    const link = await linkAt(115200);
    expect(link.samplingIntervalMs).toBe(2);
    expect(link.samplePeriod).toBeCloseTo(0.002, 6);
  });
});
