/**
 * The Node versions twolink supports, and what is known about a version (docs/serial.md, README
 * "Install"): pure functions of the version text, so that tests pin them without that Node.
 *
 * - 22 and 24 are the LTS lines (package.json `engines`); CI runs the unit tests on both and the
 *   realtime tests on its default Node (.ci/run).
 * - 20 reached its end of life in April 2026: it still works here (these machines run it), unsupported.
 * - From 26.4, serialport's native binding delivers a read's promise only at the next unrelated event
 *   of the loop (serialport/bindings-cpp PR #239, open; the change in Node: nodejs/node #62969). The
 *   serial path `serialport` then stalls: measured here on Node 26.12.1, the Firmata pty rig's
 *   handshake timed out in 2 of 2 runs over `--serial serialport` and was done over `--serial tty`.
 *   The relay process works around it on those versions (serial-relay-main.ts nudgeReads: with it, 2
 *   of 2 runs done there), and twolink says so at start-up.
 */

/** A Node version's major, minor and patch (from "v22.1.0" or "22.1.0"); throws on anything else. */
export function nodeVersion(text: string): [number, number, number] {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(text);
  if (!m) throw new Error(`not a Node version: "${text}"`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}

/** How twolink stands with a Node line. */
export type NodeSupport =
  | { status: 'supported'; line: number }
  | { status: 'end-of-life'; line: number; note: string }
  | { status: 'untested'; line: number; note: string };

/** The LTS lines twolink supports (package.json `engines`, tests/node-support.test.ts pins the two together). */
export const SUPPORTED_NODE_LINES: readonly number[] = [22, 24];

/** twolink's word on Node `version`. */
export function nodeSupport(version: string = process.version): NodeSupport {
  const [major] = nodeVersion(version);
  if (SUPPORTED_NODE_LINES.includes(major)) return { status: 'supported', line: major };
  if (major === 20)
    return {
      status: 'end-of-life',
      line: major,
      note: 'Node 20 reached its end of life in April 2026: twolink still runs on it, unsupported; install Node 22 or 24',
    };
  if (major < 20)
    return {
      status: 'end-of-life',
      line: major,
      note: `Node ${major} is past its end of life and too old for twolink (needs 20.19 or later): install Node 22 or 24`,
    };
  return { status: 'untested', line: major, note: `Node ${major} is not a line twolink tests (22 and 24 are)` };
}

/**
 * Why the `serialport` serial path stalls on `version` without twolink's workaround (the relay wakes
 * each read itself), or undefined where it does not.
 */
export function serialportStall(version: string = process.version): string | undefined {
  const [major, minor] = nodeVersion(version);
  if (major > 26 || (major === 26 && minor >= 4)) {
    return (
      `on Node ${version.replace(/^v/, '')} serialport's native binding delivers reads late, at the next unrelated event of its loop ` +
      "(serialport/bindings-cpp PR #239, open; the Firmata pty rig's handshake timed out here on Node 26.12.1 without a workaround): " +
      "twolink's relay wakes each read itself; if a run stalls, use --serial tty on Linux, or Node 22 or 24"
    );
  }
  return undefined;
}
