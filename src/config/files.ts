/**
 * The one way twolink reads a user's input file and writes a user's output file. Reads are bounded
 * (a regular file of at most a stated size: never a FIFO that blocks, a device that never ends, or a
 * directory), and every failure, reading or writing, becomes a `FileError`: one line that names the
 * path and says what is wrong in words (a full disk, a missing folder, no permission), never a stack.
 */
import { accessSync, closeSync, constants, fstatSync, openSync, readSync, statSync, writeSync, type Stats } from 'node:fs';
import { dirname, join } from 'node:path';

/** A file could not be read or written; the message names the path. The CLI exits with code 2. */
export class FileError extends Error {
  override readonly name = 'FileError';
  constructor(
    readonly file: string,
    detail: string,
    /** The errno code behind it (ENOSPC, EACCES, ...), when there is one. */
    readonly code?: string,
  ) {
    super(`${file}: ${detail}`);
  }
}

/** Largest rig or trajectory file twolink reads [bytes]. The shipped rigs are under 4 kB. */
export const MAX_CONFIG_BYTES = 1 << 20;

/** What is at a path, in words, when it is not a regular file. */
function kindOf(st: Stats): string | undefined {
  if (st.isFile()) return undefined;
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a named pipe (FIFO)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** The errno of a failed call as words, for the message (the code is kept on the error). */
export function errnoText(e: unknown, writing: boolean): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return writing ? 'its folder does not exist' : 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory';
    case 'ENOTDIR':
      return 'a part of the path is not a directory';
    case 'ENOSPC':
      return 'the disk is full (no space left on the device)';
    case 'EDQUOT':
      return 'the disk quota is exceeded';
    case 'EROFS':
      return 'the file system is read-only';
    case 'EFBIG':
      return 'the file is too large for the file system';
    case 'ENAMETOOLONG':
      return 'the path is too long';
    case 'EMFILE':
    case 'ENFILE':
      return 'too many open files';
    case 'EIO':
      return 'an input/output error on the device';
    default: {
      const msg = e instanceof Error ? e.message : String(e);
      return code ? `${msg.replace(/^[A-Z]+: /, '').replace(/, \w+ '.*'$/, '')} (${code})` : msg;
    }
  }
}

/**
 * Reads a whole text file of at most `maxBytes` (UTF-8). Refuses, with a FileError naming `file`:
 * a missing file, a directory, a FIFO or a device (checked before opening, and again on the open
 * descriptor, which is opened non-blocking so that a FIFO swapped in cannot hang the read), and a
 * file larger than `maxBytes`. `what` says what the file is for ("rig file"), for the messages.
 */
export function readTextFile(file: string, maxBytes: number, what = 'file'): string {
  const st = checkReadableFile(file, what);
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    throw new FileError(file, errnoText(e, false), (e as NodeJS.ErrnoException).code);
  }
  try {
    const again = kindOf(fstatSync(fd));
    if (again) throw new FileError(file, `is ${again}, not a ${what}`);
    // Sized from the stat, grown when the file reports less than it has (/proc), never past the bound.
    let buf = Buffer.allocUnsafe(Math.min(maxBytes + 1, Math.max(st.size + 1, 4096)));
    let used = 0;
    while (used <= maxBytes) {
      if (used === buf.length) {
        const bigger = Buffer.allocUnsafe(Math.min(maxBytes + 1, buf.length * 2));
        buf.copy(bigger, 0, 0, used);
        buf = bigger;
      }
      const n = readSync(fd, buf, used, buf.length - used, null);
      if (n === 0) break;
      used += n;
    }
    if (used > maxBytes) {
      throw new FileError(file, `is larger than ${formatBytes(maxBytes)}, too large for a ${what}`);
    }
    return buf.toString('utf8', 0, used);
  } catch (e) {
    if (e instanceof FileError) throw e;
    throw new FileError(file, errnoText(e, false), (e as NodeJS.ErrnoException).code);
  } finally {
    closeSync(fd);
  }
}

/** Checks that `file` names a regular file that can be streamed (not a FIFO, device, directory). */
export function checkReadableFile(file: string, what = 'file'): Stats {
  let st: Stats;
  try {
    st = statSync(file);
  } catch (e) {
    throw new FileError(file, errnoText(e, false), (e as NodeJS.ErrnoException).code);
  }
  const bad = kindOf(st);
  if (bad) throw new FileError(file, `is ${bad}, not a ${what} (give the path of a regular file)`);
  return st;
}

/** How {@link checkWritablePath} treats what is already there. */
export interface OutputRules {
  /** Write over an existing regular file (the command's --force). @default false */
  force?: boolean;
  /** The command's input files: the output is never one of them, --force or not (compared by device and inode, through links). */
  inputs?: readonly string[];
  /** The option that gives --force, for the message. @default '--force' */
  forceFlag?: string;
  /**
   * The command moves the arm after this check (run, tune, identify, teach, setup): a device known to
   * refuse every write (/dev/full) is refused now, not after the motion. Commands that move nothing
   * write at once and fail at the write (which is how tests stand in for a full disk). @default false
   */
  motion?: boolean;
}

/** /dev/full's device number (Linux: character device 1, 7): every write fails with ENOSPC. */
function isDevFull(st: Stats): boolean {
  const major = (st.rdev >> 8) & 0xfff;
  const minor = (st.rdev & 0xff) | ((st.rdev >> 12) & 0xfff00);
  return st.isCharacterDevice() && major === 1 && minor === 7;
}

/** Whether this process may write `path` (permission, a read-only file system); the errno's words when not. */
function writableWhy(path: string): string | undefined {
  try {
    accessSync(path, constants.W_OK);
    return undefined;
  } catch (e) {
    return errnoText(e, true);
  }
}

/**
 * Checks, before any work starts, that `file` can be written: its folder exists and is a folder that
 * this process may write in (or the file exists and may be written: permission, a read-only file
 * system), the path is not a directory, it is not one of the command's `inputs` (ever), and it is not
 * an existing regular file unless `rules.force`. Devices such as /dev/null are accepted (writing to them
 * is what the user asked); /dev/full is refused when the command moves the arm (`rules.motion`), and
 * elsewhere fails at the write, with a FileError.
 */
export function checkWritablePath(file: string, what = 'output', rules: OutputRules = {}): void {
  if (file === '') throw new FileError(file, `an empty path for the ${what}`);
  let st: Stats | undefined;
  try {
    st = statSync(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') throw new FileError(file, errnoText(e, true), code);
  }
  if (st?.isDirectory()) throw new FileError(file, `is a directory: give a file name for the ${what}`, 'EISDIR');
  if (st) {
    for (const input of rules.inputs ?? []) {
      const it = statOrUndefined(input);
      if (it && it.dev === st.dev && it.ino === st.ino) {
        throw new FileError(
          file,
          `is ${input === file ? 'an input of this command' : `the input ${input}`}: the ${what} never writes over its input; give another file`,
          'EEXIST',
        );
      }
    }
    if (st.isFile() && !rules.force)
      throw new FileError(
        file,
        `exists: the ${what} would replace it; give ${rules.forceFlag ?? '--force'} to write over it, or another file`,
        'EEXIST',
      );
    if (rules.motion && isDevFull(st))
      throw new FileError(
        file,
        `is /dev/full, a device that refuses every write (no space left): the ${what} would be lost after the motion; give a file`,
        'ENOSPC',
      );
    const why = writableWhy(file);
    if (why) throw new FileError(file, `cannot be written: ${why}`);
    return;
  }
  const dir = dirname(file);
  let dst: Stats;
  try {
    dst = statSync(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new FileError(file, code === 'ENOENT' ? `the folder ${dir} does not exist` : errnoText(e, true), code);
  }
  if (!dst.isDirectory()) throw new FileError(file, `${dir} is not a folder`, 'ENOTDIR');
  const why = writableWhy(dir);
  if (why) throw new FileError(file, `cannot write in its folder ${dir}: ${why}`);
}

/**
 * Checks a folder a command writes several files into (`tune --plot DIR`): it is a folder, or it is not
 * there yet and its parent is (it is made then); each of `names` in it passes {@link checkWritablePath}.
 */
export function checkWritableFolder(dir: string, names: readonly string[], what: string, rules: OutputRules = {}): void {
  if (dir === '') throw new FileError(dir, `an empty path for the ${what} folder`);
  let st: Stats | undefined;
  try {
    st = statSync(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') throw new FileError(dir, errnoText(e, true), code);
  }
  if (st && !st.isDirectory())
    throw new FileError(dir, `is not a folder: the ${what} go into a folder (give a new or an existing folder)`, 'ENOTDIR');
  if (!st) {
    // Made at the write, one level: its parent must be there and writable.
    checkWritablePath(dir, `${what} folder`, { ...rules, force: false });
    return;
  }
  for (const n of names) checkWritablePath(join(dir, n), what, rules);
}

function statOrUndefined(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}

/** Opens `file` for writing (created or truncated); a FileError naming it when that fails. */
export function openForWrite(file: string): number {
  try {
    return openSync(file, 'w');
  } catch (e) {
    throw new FileError(file, `cannot create it: ${errnoText(e, true)}`, (e as NodeJS.ErrnoException).code);
  }
}

/** Writes all of `buf` to `fd`; a FileError naming `file` when a write fails (ENOSPC on /dev/full). */
export function writeAll(fd: number, buf: Uint8Array, file: string): void {
  let off = 0;
  try {
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
  } catch (e) {
    throw new FileError(file, `cannot write it: ${errnoText(e, true)}`, (e as NodeJS.ErrnoException).code);
  }
}

/** Closes `fd`; a close that reports a deferred write error (NFS, a full disk) is a FileError too. */
export function closeFile(fd: number, file: string): void {
  try {
    closeSync(fd);
  } catch (e) {
    throw new FileError(file, `cannot finish writing it: ${errnoText(e, true)}`, (e as NodeJS.ErrnoException).code);
  }
}

/** Writes `text` as the whole content of `file` (created or truncated); FileErrors name the path. */
export function writeTextFile(file: string, text: string | Uint8Array): void {
  const fd = openForWrite(file);
  try {
    writeAll(fd, typeof text === 'string' ? Buffer.from(text) : text, file);
  } catch (e) {
    try {
      closeSync(fd);
    } catch {
      // the write error is the one to report
    }
    throw e;
  }
  closeFile(fd, file);
}

/** 1048576 -> "1 MiB". */
export function formatBytes(n: number): string {
  if (n >= 1 << 30 && n % (1 << 30) === 0) return `${n / (1 << 30)} GiB`;
  if (n >= 1 << 20 && n % (1 << 20) === 0) return `${n / (1 << 20)} MiB`;
  if (n >= 1 << 10 && n % (1 << 10) === 0) return `${n / (1 << 10)} KiB`;
  return `${n} bytes`;
}
