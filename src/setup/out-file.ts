/**
 * The rig file `twolink setup` writes, checked before the arm first moves and written only at the
 * end: a regular file (or a new one) in a folder we can write, never a FIFO, a device, a folder or an
 * empty path. Writing over an existing file (the input itself by default, or any file --out names,
 * through a symlink too) keeps the old one as FILE.bak (FILE.bak1, ...). Every read is bounded
 * (config/files.ts); every failure is a FileError naming the path.
 */
import {
  chmodSync,
  closeSync,
  constants,
  lstatSync,
  openSync,
  readlinkSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  type Stats,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { errnoText, FileError, MAX_CONFIG_BYTES, readTextFile, writeTextFile } from '../config/files.js';

/** Where the rig file goes, as checked up front. */
export interface OutFile {
  /** The path as given (--out, or --rig when --out is omitted). */
  given: string;
  /** The file that is written: the path with its symlinks resolved. */
  real: string;
  /** A file is there already: it is backed up before it is replaced. */
  exists: boolean;
  /** It is the input rig file itself (by any path). */
  isInput: boolean;
}

const code = (e: unknown): string | undefined => (e as NodeJS.ErrnoException).code;

/** The path with every symlink resolved; for a file not there yet, its folder's real path and its name. */
function realPathOf(file: string): string {
  try {
    return realpathSync(file);
  } catch (e) {
    if (code(e) !== 'ENOENT') throw new FileError(file, errnoText(e, true), code(e));
    // A dangling symlink names a file elsewhere: write there, as the link says.
    if (isSymlink(file)) return realPathOf(resolve(dirname(file), readlinkSync(file, 'utf8')));
    let dir: string;
    try {
      dir = realpathSync(dirname(file));
    } catch (e2) {
      throw new FileError(file, code(e2) === 'ENOENT' ? `the folder ${dirname(file)} does not exist` : errnoText(e2, true), code(e2));
    }
    return join(dir, basename(file));
  }
}

function isSymlink(file: string): boolean {
  try {
    return lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Proves the folder takes a new file (a read-only folder or file system, no permission) by making one and removing it. */
function probeFolder(file: string, dir: string): void {
  const probe = join(dir, `.twolink-setup-${process.pid}-${Date.now()}.tmp`);
  let fd: number;
  try {
    fd = openSync(probe, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  } catch (e) {
    throw new FileError(
      file,
      `cannot write in its folder ${dir}: ${code(e) === 'ENOENT' ? 'it takes no new files' : errnoText(e, true)}`,
      code(e),
    );
  }
  closeSync(fd);
  unlinkSync(probe);
}

/**
 * Checks, before any motion, that the rig file can be written at `out` (or over `rigPath` when `out`
 * is undefined). Throws a FileError naming the path and what is wrong.
 */
export function checkOutFile(rigPath: string, out: string | undefined): OutFile {
  if (out === '')
    throw new FileError(
      '--out',
      'the path is empty: give the file to write the rig file to (or leave --out out to write over --rig, after a backup)',
    );
  const given = out ?? rigPath;
  const real = realPathOf(given);
  let st: Stats | undefined;
  try {
    st = statSync(real);
  } catch (e) {
    if (code(e) !== 'ENOENT') throw new FileError(given, errnoText(e, true), code(e));
  }
  if (st && !st.isFile()) {
    const what = st.isDirectory()
      ? 'a directory'
      : st.isFIFO()
        ? 'a named pipe (FIFO)'
        : st.isCharacterDevice() || st.isBlockDevice()
          ? 'a device'
          : 'not a regular file';
    throw new FileError(given, `is ${what}: the rig file must go to a regular file (give --out FILE.json)`);
  }
  probeFolder(given, dirname(real));
  if (st) {
    // What is there is backed up first: it must be readable (bounded) and writable.
    readTextFile(real, MAX_CONFIG_BYTES, 'file setup may replace (setup backs it up first; give --out a new file instead)');
    try {
      closeSync(openSync(real, constants.O_WRONLY));
    } catch (e) {
      throw new FileError(given, `cannot be replaced: ${errnoText(e, true)}`, code(e));
    }
  }
  let isInput = false;
  try {
    isInput = realpathSync(rigPath) === real;
  } catch {
    // the rig file was read a moment ago; if it is gone now, it is not this file
  }
  return { given, real, exists: st !== undefined, isInput };
}

/** Writes `text` to the checked file: the old one kept as .bak first, the new one put in place whole (a temporary file, renamed). */
export function writeOutFile(o: OutFile, text: string): { path: string; backup: string | null } {
  let backup: string | null = null;
  let mode: number | undefined;
  try {
    const st = statSync(o.real);
    if (st.isFile()) mode = st.mode & 0o7777;
  } catch {
    mode = undefined;
  }
  const exists = mode !== undefined;
  if (exists) {
    const old = readTextFile(o.real, MAX_CONFIG_BYTES, 'file to back up');
    let k = 0;
    do backup = `${o.real}.bak${k === 0 ? '' : k}`;
    while (existsAt(backup) && ++k);
    writeTextFile(backup, old);
  }
  const tmp = `${o.real}.twolink-${process.pid}.tmp`;
  writeTextFile(tmp, text);
  try {
    // The new file keeps the old one's permissions.
    if (mode !== undefined) chmodSync(tmp, mode);
    renameSync(tmp, o.real);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      // the rename's error is the one to report
    }
    throw new FileError(o.given, `cannot put it in place: ${errnoText(e, true)}`, code(e));
  }
  return { path: o.given, backup };
}

function existsAt(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}
