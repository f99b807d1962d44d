/**
 * Child processes that end with the process that started them: a test rig's socat, simavr harness or
 * rig process must not outlive `twolink rig`, not even when that is killed with SIGKILL. On Linux the
 * child is started under util-linux's `setpriv --pdeathsig SIGTERM` (the package of `chrt`, which --rt
 * needs anyway), so the kernel sends it SIGTERM when the thread that started it ends (prctl
 * PR_SET_PDEATHSIG; start these from the main thread). setpriv execs the command: the pid is the command's.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';

let setprivOk: boolean | undefined;

function hasSetpriv(): boolean {
  if (setprivOk === undefined) setprivOk = process.platform === 'linux' && spawnSync('setpriv', ['--version'], { stdio: 'ignore' }).status === 0;
  return setprivOk;
}

/** `spawn(cmd, args, opts)`, tied to this process's life where Linux can (see above). */
export function spawnTied(cmd: string, args: readonly string[], opts: SpawnOptions): ChildProcess {
  return hasSetpriv() ? spawn('setpriv', ['--pdeathsig', 'SIGTERM', '--', cmd, ...args], opts) : spawn(cmd, args, opts);
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
