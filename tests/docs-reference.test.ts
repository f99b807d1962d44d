// docs/reference/ is generated from the code (issue 36): the rig file from its zod schema, the command
// line from the commands' option tables, the recording from the tick table and the header's schema.
// A page that no longer matches what the code generates fails here; `npm run docs:reference` rewrites
// the pages (vitest's -u: toMatchFileSnapshot writes the file).
import { describe, expect, it, vi } from 'vitest';
import type { OptionSpecs } from '../src/cli/args.js';
import { cliReference } from './helpers/reference/cli.js';
import { recordingReference } from './helpers/reference/recording.js';
import { rigFileReference } from './helpers/reference/rig-file.js';

// Each command's help page is taken from the arguments of its formatHelp call, as they are given.
vi.mock('../src/cli/args.js', async (importOriginal) => {
  const args = await importOriginal<typeof import('../src/cli/args.js')>();
  const { HELP_PAGES } = await import('./helpers/reference/cli.js');
  return {
    ...args,
    formatHelp: (command: string, summary: string, usage: string, specs: OptionSpecs, more = ''): string => {
      HELP_PAGES.push({ command, summary, usage, specs, more });
      return args.formatHelp(command, summary, usage, specs, more);
    },
  };
});

const STALE = 'docs/reference/ is generated: run `npm run docs:reference` and commit the pages';

describe('docs/reference/', () => {
  it('rig-file.md is the rig file schema, every field with its type, default, range and meaning', async () => {
    const page = rigFileReference();
    // Every section of the schema is in it, down to the mock's adapter and the H-bridge's numbers.
    for (const path of [
      'arm',
      'control.pid',
      'control.pid.schedule[]',
      'plant.adapter',
      'motors[].driver (as an object)',
      'firmata.sensors[] (type "potentiometer")',
      'wiring',
    ]) {
      expect(page, path).toContain(`## \`${path}\``);
    }
    expect(page).toMatch(
      /\| `L1` \| number \| \(required\) \| at least 0\.001 m \(a bench-top arm\); at most 10 m \(a bench-top arm\) \| length of link 1 \[m\] \|/,
    );
    expect(page).toMatch(/\| `watchdogMs` \| integer \| `100` \| 10 to 1000 \| Board watchdog timeout \[ms\]\. \|/);
    await expect(page, STALE).toMatchFileSnapshot('../docs/reference/rig-file.md');
  });

  it('cli.md is every command and subcommand with every option of its table', async () => {
    const page = await cliReference();
    const { COMMANDS } = await import('../src/cli/main.js');
    for (const name of Object.keys(COMMANDS)) expect(page, name).toContain(`## twolink ${name}\n`);
    for (const sub of ['model id', 'model jacobian', 'plot traj', 'plot run']) expect(page, sub).toContain(`### twolink ${sub}\n`);
    expect(page).toMatch(/\| `--traj` \| NAME\\\|FILE \(repeatable\) \| trajectory: /);
    await expect(page, STALE).toMatchFileSnapshot('../docs/reference/cli.md');
  });

  it('recording.md is the header, every tick field with its unit and CSV columns, and the summary', async () => {
    const page = recordingReference();
    const { TICK_TABLE } = await import('../src/telemetry/tick.js');
    for (const s of TICK_TABLE) expect(page, s.name).toContain(`| \`${'group' in s ? `${s.group}.` : ''}${s.name}\` | ${s.unit || '-'} |`);
    expect(page).toContain('`des_q1_rad`, `des_q2_rad`');
    expect(page).toContain('### `law (kind "controller")`');
    await expect(page, STALE).toMatchFileSnapshot('../docs/reference/recording.md');
  });
});
