/**
 * Checks on the database path before SQLite touches it, so that a wrong path gets an error that
 * says what to do, and a file that is not ours is never written to.
 */
import * as fs from "node:fs"
import * as path from "node:path"

/** What went wrong with the path, in words a user can act on; null when all is well. */
export type PathProblem = {
  readonly reason: "cannot-create" | "not-writable" | "not-a-database"
  readonly message: string
} | null

const header = Buffer.from("SQLite format 3\0", "latin1")

const describe = (error: unknown): string => {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  const message = error instanceof Error ? error.message : String(error)
  // Node's messages usually start with the code already ("ENOENT: no such file...").
  return code && !message.startsWith(code) ? `${code}: ${message}` : message
}

/** Creates the directory of `filename` (and its parents, mode 0700) when it is missing. */
export const createDirectory = (filename: string): PathProblem => {
  try {
    fs.mkdirSync(path.dirname(path.resolve(filename)), { recursive: true, mode: 0o700 })
    return null
  } catch (error) {
    return {
      reason: "cannot-create",
      message: `cannot create the directory of ${filename} (${describe(error)})`,
    }
  }
}

/**
 * Makes sure `filename` is a file we may open: an existing SQLite database (or an empty file),
 * or a new empty file created here with mode 0600, before SQLite creates it with the umask's
 * mode. SQLite gives the `-wal` and `-shm` files the database file's mode.
 */
export const prepare = (filename: string): { readonly problem: PathProblem; readonly created: boolean } => {
  if (filename === "" || filename === ":memory:" || filename.startsWith("file:")) {
    return {
      created: false,
      problem: {
        reason: "cannot-create",
        message: `"${filename}" is not a file path; the SQLite store needs a file (use the memory store for an in-memory one)`,
      },
    }
  }
  let created = false
  let stat: fs.Stats | undefined
  try {
    stat = fs.statSync(filename)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
      return {
        created,
        problem: { reason: "cannot-create", message: `cannot use ${filename} (${describe(error)})` },
      }
    }
  }
  if (stat === undefined) {
    try {
      // O_EXCL: if another process creates it first we fall through and check its file.
      fs.closeSync(
        fs.openSync(filename, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_RDWR, 0o600),
      )
      created = true
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code !== "EEXIST") {
        const dir = path.dirname(path.resolve(filename))
        const hint =
          code === "ENOENT"
            ? `the directory ${dir} does not exist; create it first`
            : code === "ENOTDIR"
              ? `a component of ${dir} is not a directory`
              : code === "EACCES" || code === "EPERM" || code === "EROFS"
                ? `the directory ${dir} is not writable by this process`
                : "choose another path"
        return {
          created,
          problem: {
            reason: "cannot-create",
            message: `cannot create the database file ${filename}: ${hint} (${describe(error)})`,
          },
        }
      }
    }
    stat = fs.statSync(filename)
  }
  if (!stat.isFile()) {
    return {
      created,
      problem: { reason: "cannot-create", message: `${filename} exists and is not a regular file` },
    }
  }
  try {
    fs.accessSync(filename, fs.constants.R_OK | fs.constants.W_OK)
  } catch (error) {
    return {
      created,
      problem: {
        reason: "not-writable",
        message: `the database file ${filename} is not readable and writable by this process (${describe(error)})`,
      },
    }
  }
  if (stat.size > 0) {
    const start = Buffer.alloc(header.length)
    let read = 0
    try {
      const fd = fs.openSync(filename, "r")
      try {
        read = fs.readSync(fd, start, 0, header.length, 0)
      } finally {
        fs.closeSync(fd)
      }
    } catch (error) {
      return {
        created,
        problem: { reason: "not-writable", message: `cannot read ${filename} (${describe(error)})` },
      }
    }
    if (read < header.length || !start.equals(header)) {
      return {
        created,
        problem: {
          reason: "not-a-database",
          message: `${filename} is not a SQLite database (its header is wrong); it was left untouched. Point the store at a new path or at a database it created`,
        },
      }
    }
  }
  return { created, problem: null }
}

/**
 * The `-wal` and `-shm` files should never be readable by more users than the database itself.
 * SQLite already copies the database's mode to them; this tightens any that were made before
 * (by an older tool, or a different umask) and reports what it could not fix.
 */
export const tightenSideFiles = (filename: string): ReadonlyArray<string> => {
  const problems: Array<string> = []
  let mode: number
  try {
    mode = fs.statSync(filename).mode & 0o777
  } catch {
    return problems
  }
  for (const side of [`${filename}-wal`, `${filename}-shm`]) {
    try {
      const sideMode = fs.statSync(side).mode & 0o777
      if ((sideMode & ~mode) !== 0) fs.chmodSync(side, sideMode & mode)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") problems.push(`${side}: ${describe(error)}`)
    }
  }
  return problems
}
