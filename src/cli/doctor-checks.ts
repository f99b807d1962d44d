/**
 * What `twolink doctor` looks at on this machine: the kernel's preemption mode, whether the loop can
 * have SCHED_FIFO and locked memory, the CPU governor, and the USB adapter behind a serial port (from
 * sysfs: vendor and product IDs, the driver, an FTDI's latency timer); the OS, Node's support, the
 * serial path and the priority a run gets (platformInfo). Each check is pass, warn or
 * fail with its evidence and the exact fix. The file system root is a parameter so tests can point
 * it at a fake /proc and /sys.
 */
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import os from 'node:os';
import { basename, dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { adapterFlushS, adapterOfUsbId, FTDI, type AdapterKind } from '../config/cable.js';
import type { SerialPathChoice } from '../config/rig.js';
import { nodeSupport, serialportStall, type NodeSupport } from '../time/platform.js';
import { priorityHowTo, raiseProcessPriority } from '../time/priority.js';
import { leaveRealtime, requestRealtime, threadId } from '../time/threads.js';
import { resolveSerialPath, type SerialPath } from '../transport/open.js';

export type CheckStatus = 'pass' | 'warn' | 'fail';

export interface DoctorCheck {
  name: string;
  status: CheckStatus;
  /** What was seen (one line). */
  evidence: string;
  /** The exact command or change that fixes it; null when there is nothing to fix. */
  fix: string | null;
}

export interface KernelInfo {
  /** `uname -v` (os.version()). */
  version: string;
  release: string;
  /** Preemption model: rt (PREEMPT_RT), full, dynamic, voluntary, none or unknown. */
  preempt: 'rt' | 'full' | 'dynamic' | 'voluntary' | 'none' | 'unknown';
  /** /sys/kernel/realtime reads 1. */
  realtimeFlag: boolean;
}

export interface RealtimeInfo {
  uid: number;
  /** RLIMIT_RTPRIO soft limit (the highest SCHED_FIFO priority allowed without CAP_SYS_NICE). */
  rtprio: number | 'unlimited' | null;
  capSysNice: boolean;
  /** RLIMIT_MEMLOCK soft limit [bytes]. */
  memlockBytes: number | 'unlimited' | null;
  /** scaling_governor of each CPU that has one (null: not exposed, e.g. in a VM). */
  governors: string[] | null;
}

export interface AdapterInfo {
  kind: AdapterKind;
  /** What the IDs say it is, or why there is no USB device. */
  what: string;
  usb: boolean;
  vid: number | null;
  pid: number | null;
  driver: string | null;
  /** An FTDI's latency timer [ms] as sysfs reads it. */
  latencyTimerMs: number | null;
  /** The adapter's hold on board -> host data [ms]. */
  flushMs: number;
  /** The tty's name (ttyUSB0), for the fixes. */
  tty: string | null;
}

const read = (root: string, p: string): string | null => {
  try {
    return readFileSync(join(root, p), 'utf8');
  } catch {
    return null;
  }
};

/** The kernel: its version string names PREEMPT_RT, PREEMPT, PREEMPT_DYNAMIC; /sys/kernel/realtime says rt. */
export function kernelInfo(root = '/', version = os.version(), release = os.release()): KernelInfo {
  const realtimeFlag = (read(root, 'sys/kernel/realtime') ?? '').trim() === '1';
  const v = version.toUpperCase();
  let preempt: KernelInfo['preempt'] = 'unknown';
  if (realtimeFlag || /PREEMPT_RT|PREEMPT RT/.test(v)) preempt = 'rt';
  else if (v.includes('PREEMPT_DYNAMIC')) {
    // The mode chosen at boot: /sys/kernel/debug/sched/preempt (root) lists them, the active one in ( ).
    const m = /\((\w+)\)/.exec(read(root, 'sys/kernel/debug/sched/preempt') ?? '');
    preempt = m?.[1] === 'full' ? 'full' : m?.[1] === 'voluntary' ? 'voluntary' : m?.[1] === 'none' ? 'none' : 'dynamic';
  } else if (/\bPREEMPT\b/.test(v)) preempt = 'full';
  else if (version) preempt = 'voluntary';
  return { version, release, preempt, realtimeFlag };
}

function limit(limits: string, name: string): number | 'unlimited' | null {
  const line = limits.split('\n').find((l) => l.startsWith(name));
  if (!line) return null;
  const soft = line.slice(name.length).trim().split(/\s+/)[0];
  if (soft === 'unlimited') return 'unlimited';
  const n = Number(soft);
  return Number.isFinite(n) ? n : null;
}

/** SCHED_FIFO and memory locking for this process: /proc/self/limits and /proc/self/status; the CPU governors. */
export function realtimeInfo(root = '/'): RealtimeInfo {
  const limits = read(root, 'proc/self/limits') ?? '';
  const status = read(root, 'proc/self/status') ?? '';
  const cap = /CapEff:\s*([0-9a-f]+)/i.exec(status)?.[1];
  const uid = Number(/Uid:\s*(\d+)/.exec(status)?.[1] ?? process.getuid?.() ?? -1);
  // CAP_SYS_NICE is capability 23.
  const capSysNice = cap !== undefined && (BigInt(`0x${cap}`) & (1n << 23n)) !== 0n;
  let governors: string[] | null;
  try {
    const cpus = readdirSync(join(root, 'sys/devices/system/cpu')).filter((d) => /^cpu\d+$/.test(d));
    const g = cpus.map((c) => read(root, `sys/devices/system/cpu/${c}/cpufreq/scaling_governor`)?.trim()).filter((x): x is string => !!x);
    governors = g.length ? g : null;
  } catch {
    governors = null;
  }
  return { uid, rtprio: limit(limits, 'Max realtime priority'), capSysNice, memlockBytes: limit(limits, 'Max locked memory'), governors };
}

/** The checks of the kernel and of real-time scheduling. */
export function systemChecks(k: KernelInfo, r: RealtimeInfo): DoctorCheck[] {
  const user = os.userInfo().username;
  const out: DoctorCheck[] = [];
  out.push(
    k.preempt === 'rt' || k.preempt === 'full'
      ? {
          name: 'kernel preemption',
          status: 'pass',
          evidence: `${k.release}: ${k.preempt === 'rt' ? 'PREEMPT_RT (/sys/kernel/realtime = 1)' : 'fully preemptible (PREEMPT)'}: ${k.version}`,
          fix: null,
        }
      : {
          name: 'kernel preemption',
          status: 'warn',
          evidence: `${k.release}: ${k.preempt === 'dynamic' ? `PREEMPT_DYNAMIC, mode not readable (${r.uid === 0 ? 'debugfs is not mounted or not readable here: /sys/kernel/debug/sched/preempt' : 'needs root: /sys/kernel/debug/sched/preempt'})` : `preemption ${k.preempt}`}: ${k.version}`,
          fix:
            k.preempt === 'dynamic' || k.preempt === 'voluntary'
              ? 'boot with preempt=full on the kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub, then sudo update-grub), or install a PREEMPT_RT kernel (Debian: apt install linux-image-rt-amd64)'
              : 'install a PREEMPT_RT kernel (Debian: apt install linux-image-rt-amd64)',
        },
  );
  const fifo = r.uid === 0 || r.capSysNice || r.rtprio === 'unlimited' || (typeof r.rtprio === 'number' && r.rtprio > 0);
  out.push({
    name: 'SCHED_FIFO allowed',
    status: fifo ? 'pass' : 'warn',
    evidence: `RLIMIT_RTPRIO ${r.rtprio ?? '?'}, CAP_SYS_NICE ${r.capSysNice ? 'yes' : 'no'}, uid ${r.uid}`,
    fix: fifo
      ? null
      : `echo '${user} - rtprio 95' | sudo tee /etc/security/limits.d/99-twolink.conf (log in again), or sudo setcap cap_sys_nice+ep "$(readlink -f "$(which node)")"`,
  });
  const memOk = r.uid === 0 || r.memlockBytes === 'unlimited' || (typeof r.memlockBytes === 'number' && r.memlockBytes >= 64 * 1024 * 1024);
  out.push({
    name: 'memory locking',
    status: memOk ? 'pass' : 'warn',
    evidence: `RLIMIT_MEMLOCK ${r.memlockBytes === 'unlimited' ? 'unlimited' : r.memlockBytes === null ? '?' : `${Math.round(r.memlockBytes / 1024)} KiB`}`,
    fix: memOk ? null : `echo '${user} - memlock unlimited' | sudo tee -a /etc/security/limits.d/99-twolink.conf (log in again)`,
  });
  const g = r.governors;
  const perf = g !== null && g.every((x) => x === 'performance');
  out.push({
    name: 'CPU governor',
    status: perf ? 'pass' : 'warn',
    evidence: g === null ? 'no cpufreq governor exposed (a VM or a fixed clock)' : `scaling_governor: ${[...new Set(g)].join(', ')}`,
    fix:
      perf || g === null
        ? null
        : 'echo performance | sudo tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor (or: sudo cpupower frequency-set -g performance)',
  });
  return out;
}

/** Hex sysfs attribute (idVendor) as a number. */
const hex = (s: string | null): number | null => (s === null ? null : Number.parseInt(s.trim(), 16));

/** The adapter behind serial port `path`: walks its sysfs device up to the USB device with idVendor. */
export function adapterInfo(path: string, root = '/'): AdapterInfo {
  let real = path;
  try {
    real = realpathSync(path);
  } catch {
    // a path that does not exist: said below
  }
  const tty = basename(real);
  const dev = join(root, 'sys/class/tty', tty, 'device');
  const none = (what: string): AdapterInfo => ({
    kind: 'none',
    what,
    usb: false,
    vid: null,
    pid: null,
    driver: null,
    latencyTimerMs: null,
    flushMs: 0,
    tty: null,
  });
  if (real.startsWith('/dev/pts/') || !existsSync(dev))
    return none(`${path} is not a USB device (${real.startsWith('/dev/pts/') ? 'a pseudo-terminal' : 'no sysfs device'}): no adapter`);
  let p: string;
  try {
    p = realpathSync(dev);
  } catch {
    return none(`${path}: its sysfs device cannot be read`);
  }
  let driver: string | null;
  try {
    driver = basename(realpathSync(join(dev, 'driver')));
  } catch {
    driver = null;
  }
  // Up from the interface (or the usb-serial port) to the USB device, which has idVendor.
  let vid: number | null = null;
  let pid: number | null = null;
  for (let d = p, i = 0; i < 6 && d !== dirname(d); d = dirname(d), i++) {
    const v = read('/', join(d, 'idVendor'));
    if (v !== null) {
      vid = hex(v);
      pid = hex(read('/', join(d, 'idProduct')));
      break;
    }
  }
  if (vid === null || pid === null) return none(`${path} is not a USB device (driver ${driver ?? 'unknown'})`);
  const drv = driver === 'ch341-uart' ? 'ch341' : (driver ?? undefined);
  const hit = adapterOfUsbId(vid, pid, drv);
  const kind = hit?.kind ?? 'none';
  const lat = kind === 'ftdi' ? Number((read(root, `sys/bus/usb-serial/devices/${tty}/latency_timer`) ?? '').trim()) : NaN;
  const latencyTimerMs = Number.isFinite(lat) && lat > 0 ? lat : null;
  const flushMs = adapterFlushS(kind, latencyTimerMs ?? FTDI.defaultLatencyMs) * 1000;
  return {
    kind,
    what: hit?.what ?? `an unknown USB device (driver ${driver ?? 'unknown'})`,
    usb: true,
    vid,
    pid,
    driver,
    latencyTimerMs,
    flushMs,
    tty,
  };
}

const id = (v: number | null): string => (v === null ? '?' : v.toString(16).padStart(4, '0'));

/** The adapter's check: what it is, and for an FTDI whether its latency timer is 1 ms. */
export function adapterCheck(a: AdapterInfo, path: string): DoctorCheck {
  if (!a.usb) return { name: 'adapter', status: 'warn', evidence: a.what, fix: null };
  const ids = `${id(a.vid)}:${id(a.pid)} (${a.what}, driver ${a.driver ?? '?'})`;
  if (a.kind === 'ftdi') {
    const ms = a.latencyTimerMs;
    const tty = a.tty ?? 'ttyUSB0';
    return ms === 1
      ? { name: 'adapter', status: 'pass', evidence: `${ids}: latency_timer 1 ms`, fix: null }
      : {
          name: 'adapter',
          status: 'warn',
          evidence: `${ids}: latency_timer ${ms ?? '?'} ms: the chip holds the board's bytes up to that long (about ${Math.round(1000 / (ms ?? 16))} round trips a second)`,
          fix: `echo 1 | sudo tee /sys/bus/usb-serial/devices/${tty}/latency_timer; to keep it: a udev rule in /etc/udev/rules.d/99-twolink-ftdi.rules: ACTION=="add", SUBSYSTEM=="usb-serial", DRIVER=="ftdi_sio", ATTR{latency_timer}="1"`,
        };
  }
  if (a.kind === '16u2') {
    return {
      name: 'adapter',
      status: 'warn',
      evidence: `${ids}: arduino-usbserial flushes what the board sends every 4.096 ms (Timer0): samples arrive in bursts above 250 Hz`,
      fix: 'run at 250-500 Hz, or use a native-USB board (Leonardo/Micro: board "leonardo" in the rig file) for 1 kHz',
    };
  }
  if (a.kind === 'ch340')
    return {
      name: 'adapter',
      status: 'warn',
      evidence: `${ids}: no settable latency; about 1 ms hold (estimated)`,
      fix: 'for 1 kHz, a native-USB board (Leonardo/Micro)',
    };
  if (a.kind === 'native')
    return { name: 'adapter', status: 'pass', evidence: `${ids}: native USB CDC, sent at the host's next 1 ms frame`, fix: null };
  return { name: 'adapter', status: 'warn', evidence: `${ids} on ${path}: not a known adapter`, fix: null };
}

/** The OS, Node, the serial path and the priority a run would get (issue 34: what a laptop gives twolink). */
export interface PlatformInfo {
  /** e.g. "linux 6.1.0-18-amd64 x64". */
  os: string;
  node: string;
  nodeStatus: NodeSupport['status'];
  /** Why Node is not a supported line (null when it is). */
  nodeNote: string | null;
  serial: {
    /** As asked (--serial, else the rig file's link.serial, else auto). */
    choice: SerialPathChoice;
    /** What it resolves to on this OS, or null where the OS has no such path. */
    path: SerialPath | null;
    /** Why it cannot be used, or stalls on this Node (null when fine). */
    problem: string | null;
    /** The native binding file serialport loads (the serialport path needs it), or why it does not load. */
    binding: { file: string } | { error: string };
  };
  /** What asking for priority got this process, for people ("SCHED_FIFO 40", "HIGH priority class", "normal (...)"). */
  priority: { granted: boolean; what: string };
}

/** Where @serialport/bindings-cpp loads its native part from (a prebuild: npm runs no install script for it, package.json allowScripts), or why it does not. */
export function serialBinding(): PlatformInfo['serial']['binding'] {
  try {
    const req = createRequire(import.meta.url);
    const dir = dirname(req.resolve('@serialport/bindings-cpp/package.json'));
    req('@serialport/bindings-cpp');
    const gyp = createRequire(join(dir, 'package.json'))('node-gyp-build') as { path(dir: string): string };
    return { file: gyp.path(dir) };
  } catch (e) {
    return { error: e instanceof Error ? e.message.split('\n')[0]! : String(e) };
  }
}

/**
 * The platform's facts, asking for priority as a run does (Linux: SCHED_FIFO 40 for this thread, then
 * back to normal; elsewhere os.setPriority, priority.ts, which stays for doctor's short life).
 */
export async function platformInfo(choice: SerialPathChoice, version = process.version): Promise<PlatformInfo> {
  const support = nodeSupport(version);
  let path: SerialPath | null;
  let problem: string | null = null;
  try {
    path = resolveSerialPath(choice);
    if (path === 'serialport') problem = serialportStall(version) ?? null;
  } catch (e) {
    path = null;
    problem = e instanceof Error ? e.message : String(e);
  }
  let priority: PlatformInfo['priority'];
  if (process.platform === 'linux') {
    const tid = threadId();
    const r = await requestRealtime(tid, 40);
    if (r.granted) await leaveRealtime(tid);
    priority = r.granted
      ? { granted: true, what: 'SCHED_FIFO 40 (granted; doctor gave it back)' }
      : { granted: false, what: `normal (SCHED_FIFO refused: ${r.reason})` };
  } else {
    const p = raiseProcessPriority(process.pid);
    priority = p.kind === 'raised' ? { granted: true, what: p.name } : { granted: false, what: `normal (${p.reason})` };
  }
  return {
    os: `${process.platform} ${os.release()} ${process.arch}`,
    node: version,
    nodeStatus: support.status,
    nodeNote: support.status === 'supported' ? null : support.note,
    serial: { choice, path, problem, binding: serialBinding() },
    priority,
  };
}

/** The platform's checks: Node's support, the serial path, the native binding, the priority. */
export function platformChecks(p: PlatformInfo): DoctorCheck[] {
  const out: DoctorCheck[] = [];
  out.push({
    name: 'Node',
    status: p.nodeStatus === 'supported' ? 'pass' : 'warn',
    evidence: `${p.node} on ${p.os}: ${p.nodeStatus === 'supported' ? 'a supported LTS line' : p.nodeNote}`,
    fix: p.nodeStatus === 'supported' ? null : 'install Node 22 or 24 (nodejs.org, or your package manager)',
  });
  const b = p.serial.binding;
  const needsBinding = p.serial.path === 'serialport';
  out.push({
    name: 'serial path',
    status: p.serial.path === null || (needsBinding && 'error' in b) ? 'fail' : p.serial.problem ? 'warn' : 'pass',
    evidence: `--serial ${p.serial.choice}: ${p.serial.path ?? 'none'}${p.serial.problem ? ` (${p.serial.problem})` : ''}; serialport's native binding: ${'file' in b ? b.file : `does not load: ${b.error}`}`,
    fix:
      p.serial.path === null
        ? 'use --serial serialport (or auto)'
        : needsBinding && 'error' in b
          ? 'npm ci in the twolink folder (the binding is prebuilt for Linux, macOS and Windows)'
          : p.serial.problem
            ? 'use Node 22 or 24, or --serial tty on Linux'
            : null,
  });
  out.push({
    name: 'priority',
    status: p.priority.granted ? 'pass' : 'warn',
    evidence: p.priority.what,
    fix: p.priority.granted ? null : process.platform === 'linux' ? 'see "SCHED_FIFO allowed"' : priorityHowTo(),
  });
  return out;
}
