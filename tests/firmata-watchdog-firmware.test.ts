// twolink's FirmataWatchdog feature (firmware-protocol/firmata-watchdog/) compiles with avr-g++ for an
// Uno and a Mega, against stub headers of ConfigurableFirmata 2.x (the library is not on npm or in
// Debian): a syntax and type check of the C++, not a run of it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hangGuardMs } from './helpers/hang-guard.js';
import { ROOT } from './helpers/cli.js';

const INSTALL_AVR =
  'the AVR toolchain is missing: install it with `sudo apt-get install gcc-avr avr-libc arduino-core-avr` (CI installs these packages)';

describe('the FirmataWatchdog feature class', () => {
  it(
    'compiles for an Uno and a Mega with -Wall -Wextra -Werror',
    () => {
      if (spawnSync('sh', ['-c', 'command -v avr-g++']).status !== 0) throw new Error(INSTALL_AVR);
      const out = mkdtempSync(join(tmpdir(), 'twolink-watchdog-'));
      const r = spawnSync('make', ['--no-print-directory', '-C', join(ROOT, 'firmware-protocol/firmata-watchdog/check'), `OUT=${out}`], {
        encoding: 'utf8',
        timeout: hangGuardMs(120_000),
      });
      expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
      // avr-size's line for each board: the feature's code is well under a kilobyte of flash
      const sizes = [...`${r.stdout}`.matchAll(/^\s*(\d+)\s+(\d+)\s+(\d+)\s+\d+\s+\w+\s+\S+FirmataWatchdog\.o$/gm)].map((m) =>
        Number(m[1]),
      );
      expect(sizes).toHaveLength(2);
      for (const text of sizes) expect(text).toBeLessThan(1024);
    },
    hangGuardMs(130_000),
  );
});
