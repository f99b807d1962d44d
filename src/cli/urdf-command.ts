/**
 * `twolink urdf`: the arm of a rig file as a URDF (src/viz/urdf.ts), on stdout or to a file.
 */
import { checkWritablePath, writeTextFile } from '../config/files.js';
import { loadRig } from '../config/load.js';
import { armUrdf } from '../viz/urdf.js';
import { FORCE_OPTION, formatHelp, noPositionals, parse, stringArg, type OptionSpecs } from './args.js';

const URDF_OPTIONS = {
  rig: { type: 'string', arg: 'FILE', help: 'rig file (rigs/*.json): its arm (nominal or identified) and soft limits' },
  out: { type: 'string', arg: 'FILE', help: 'write the URDF here (default: stdout)' },
  force: FORCE_OPTION,
  help: { type: 'boolean', short: 'h', help: 'this help' },
} as const satisfies OptionSpecs;

export function urdfCommand(argv: readonly string[]): number {
  const { values: v, positionals } = parse(argv, URDF_OPTIONS, 'urdf');
  noPositionals(positionals, 'urdf', 'give the rig with --rig');
  if (v.help) {
    process.stdout.write(
      formatHelp(
        'urdf',
        'the arm as a URDF: boxes and cylinders of the rig\'s lengths, its masses, centres of mass and inertias, revolute joints with its soft limits; frame "base" in the seeds\' convention (x along alpha1 = 0, y up, gravity -y, joint axes z). See docs/foxglove.md.',
        'urdf --rig F [--out arm.urdf]',
        URDF_OPTIONS,
        'Example: twolink urdf --rig rigs/mock-arm.json --out arm.urdf',
      ),
    );
    return 0;
  }
  const rig = loadRig(stringArg(v.rig, 'rig', 'a rig file, e.g. --rig rigs/mock-arm.json'));
  const text = armUrdf(rig);
  if (typeof v.out === 'string') {
    checkWritablePath(v.out, 'URDF', { force: v.force === true, inputs: [rig.file] });
    writeTextFile(v.out, text);
    process.stderr.write(`wrote the URDF of ${rig.name} to ${v.out}\n`);
  } else process.stdout.write(text);
  return 0;
}
