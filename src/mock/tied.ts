/**
 * Child processes that end with the process that started them: a test rig's socat, simavr harness or
 * rig process must not outlive `twolink rig`, not even when that is killed with SIGKILL. On Linux the
 * child is started under util-linux's `setpriv --pdeathsig SIGTERM` (the package of `chrt`, which --rt
 * needs anyway), so the kernel sends it SIGTERM when the thread that started it ends (prctl
 * PR_SET_PDEATHSIG; start these from the main thread). setpriv execs a shell that checks the parent is
 * still there (a parent killed in between never sends the signal) and execs the command: the pid is
 * the command's.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';

let setprivOk: boolean | undefined;

function hasSetpriv(): boolean {
  if (setprivOk === undefined)
    setprivOk = process.platform === 'linux' && spawnSync('setpriv', ['--version'], { stdio: 'ignore' }).status === 0;
  return setprivOk;
}

/**
 * Run by `sh` between setpriv and the command: the death signal is armed now, but a parent that died
 * before setpriv armed it never sends one (the kernel sends it at the parent's death only), so the
 * command is started only if its parent is still the process that spawned it ($0); else it ends here.
 */
const PARENT_CHECK = '[ "$PPID" = "$0" ] || exit 143; exec "$@"';

/** `spawn(cmd, args, opts)`, tied to this process's life where Linux can (see above). */
export function spawnTied(cmd: string, args: readonly string[], opts: SpawnOptions): ChildProcess {
  return hasSetpriv()
    ? spawn('setpriv', ['--pdeathsig', 'SIGTERM', '--', 'sh', '-c', PARENT_CHECK, String(process.pid), cmd, ...args], opts)
    : spawn(cmd, args, opts);
}

/** Ends `child` with SIGTERM and resolves once it has exited (at once if it already has). */
export function endChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) {
      resolve();
      return;
    }
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
