//! All command output goes through here: [`out!`] and [`outln!`] write to standard output and
//! return an error instead of panicking like `print!` does, and [`printable`] escapes stored
//! text before it reaches a terminal. `main` turns a failed write into the exit status: a
//! closed pipe (`vernier sessions | head -1`) ends quietly, anything else (a full disk,
//! `> /dev/full`) is one line and status 2.

use std::borrow::Cow;
use std::ffi::OsString;
use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::{self, Write as _};
use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::Path;

use anyhow::{bail, Context as _, Result};
use vernier_report::units::{self, TimeForm, Zone};

/// Writing to standard output failed.
#[derive(Debug)]
pub struct StdoutError(pub io::Error);

impl fmt::Display for StdoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot write to standard output: {}", self.0)
    }
}

impl std::error::Error for StdoutError {}

impl StdoutError {
    /// The reader went away (EPIPE): the user saw what they wanted, as with `| head`.
    pub fn is_closed_pipe(&self) -> bool {
        self.0.kind() == io::ErrorKind::BrokenPipe
    }
}

/// Writes formatted text to standard output.
pub fn write_fmt(args: fmt::Arguments<'_>) -> Result<(), StdoutError> {
    io::stdout().lock().write_fmt(args).map_err(StdoutError)
}

/// Writes bytes to standard output.
pub fn write_bytes(bytes: &[u8]) -> Result<(), StdoutError> {
    io::stdout().lock().write_all(bytes).map_err(StdoutError)
}

/// Flushes standard output; the last buffered line may still fail here.
pub fn flush() -> Result<(), StdoutError> {
    io::stdout().lock().flush().map_err(StdoutError)
}

/// A writer that keeps the first error of the writer under it, so that a failed write can be
/// told apart from a failure of what produced the bytes, and a closed pipe ends quietly.
struct Tracked<W> {
    inner: W,
    error: Option<io::Error>,
}

impl<W> Tracked<W> {
    fn keep(&mut self, e: &io::Error) {
        if self.error.is_none() {
            // io::Error is not Clone; the OS error code keeps its message.
            self.error = Some(
                e.raw_os_error()
                    .map(io::Error::from_raw_os_error)
                    .unwrap_or_else(|| e.kind().into()),
            );
        }
    }
}

impl<W: io::Write> io::Write for Tracked<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let r = self.inner.write(buf);
        if let Err(e) = &r {
            self.keep(e);
        }
        r
    }

    fn flush(&mut self) -> io::Result<()> {
        let r = self.inner.flush();
        if let Err(e) = &r {
            self.keep(e);
        }
        r
    }
}

/// Bytes written per system call when output is streamed.
const STREAM_BUFFER_BYTES: usize = 1 << 16;

/// Runs `write` on a buffered writer to `path` (`export -o`), or to standard output for `-` or
/// no path, so a large output is written as it is produced instead of held whole.
///
/// A regular file, or a path where nothing is yet, is replaced atomically: the bytes go to a
/// temporary file next to it, which is synced and renamed over `path` (rename(2) is atomic
/// within a file system), so readers see the old file or the whole new one, and the file keeps
/// its mode (and owner, where allowed); when `write` fails the temporary is removed and `path`
/// is left as it was. Anything else is written through, as a shell's `>` would: a device
/// (`/dev/full`, a terminal), a FIFO, or the target of a symbolic link (`/dev/stdout`);
/// renaming over those would replace the device or the link by a file. On standard output and
/// those, what was written before an error stays written.
pub fn stream_output(
    path: Option<&Path>,
    write: impl FnOnce(&mut dyn io::Write) -> Result<()>,
) -> Result<()> {
    let Some(path) = path.filter(|p| p.as_os_str() != "-") else {
        let mut w = Tracked {
            inner: io::BufWriter::with_capacity(STREAM_BUFFER_BYTES, io::stdout().lock()),
            error: None,
        };
        let result = write(&mut w).and_then(|()| Ok(io::Write::flush(&mut w)?));
        return match (result, w.error.take()) {
            (Ok(()), _) => Ok(()),
            (Err(e), None) => Err(e),
            (Err(_), Some(io)) => Err(StdoutError(io).into()),
        };
    };
    let result = match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_file() => replace_atomically(path, write, Some(&m)),
        Ok(_) => match write_through(path, write) {
            // The reader of a FIFO or pipe (`-o /dev/stdout | head`) went away: as on stdout,
            // the end is quiet.
            Err(ThroughError::ClosedPipe) => {
                return Err(StdoutError(io::ErrorKind::BrokenPipe.into()).into())
            }
            Err(ThroughError::Other(e)) => Err(e),
            Ok(()) => Ok(()),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => replace_atomically(path, write, None),
        Err(e) => Err(e.into()),
    };
    result.with_context(|| format!("cannot write {}", printable(&path.to_string_lossy())))
}

enum ThroughError {
    ClosedPipe,
    Other(anyhow::Error),
}

impl<E: Into<anyhow::Error>> From<E> for ThroughError {
    fn from(e: E) -> Self {
        ThroughError::Other(e.into())
    }
}

fn write_through(
    path: &Path,
    write: impl FnOnce(&mut dyn io::Write) -> Result<()>,
) -> Result<(), ThroughError> {
    let target = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(anyhow::anyhow!("it is a symbolic link to a missing file").into())
        }
        Err(e) => return Err(e.into()),
    };
    if target.is_dir() {
        return Err(anyhow::anyhow!("it is a directory; expected a file name").into());
    }
    // O_TRUNC only where it means something: on a regular file behind a link. No O_CREAT: the
    // path exists.
    let file = OpenOptions::new()
        .write(true)
        .truncate(target.is_file())
        .open(path)?;
    let mut w = Tracked {
        inner: io::BufWriter::with_capacity(STREAM_BUFFER_BYTES, &file),
        error: None,
    };
    let result = write(&mut w).and_then(|()| Ok(io::Write::flush(&mut w)?));
    if let Err(e) = result {
        let kind = w.error.as_ref().map(io::Error::kind);
        return Err(if kind == Some(io::ErrorKind::BrokenPipe) {
            ThroughError::ClosedPipe
        } else {
            ThroughError::Other(e)
        });
    }
    drop(w);
    if target.is_file() {
        file.sync_all()?;
    }
    Ok(())
}

/// The temporaries of `name` are `.NAME.vernier-PID.RANDOM.tmp`: hidden, recognizable, and
/// carrying the pid of their writer so that a later write can remove those whose writer died
/// (kill -9, power loss) instead of leaving them for ever.
fn temporary_prefix(name: &std::ffi::OsStr) -> OsString {
    let mut prefix = OsString::from(".");
    prefix.push(name);
    prefix.push(".vernier-");
    prefix
}

const TEMPORARY_SUFFIX: &str = ".tmp";

fn replace_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn io::Write) -> Result<()>,
    old: Option<&fs::Metadata>,
) -> Result<()> {
    let Some(name) = path.file_name() else {
        bail!("expected a file name");
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // Named here, before a temporary's name could stand in for it in the error.
    if !dir.is_dir() {
        bail!(
            "the directory {} does not exist; create it first or give another path",
            printable(&dir.to_string_lossy())
        );
    }
    let prefix = temporary_prefix(name);
    remove_stale_temporaries(dir, &prefix);
    let mut own_prefix = prefix;
    own_prefix.push(format!("{}.", std::process::id()));
    // A new file gets 0666 less the umask, as with `>`; a replaced one keeps its mode below.
    let tmp = tempfile::Builder::new()
        .prefix(&own_prefix)
        .suffix(TEMPORARY_SUFFIX)
        .permissions(fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    if let Some(old) = old {
        let file = tmp.as_file();
        file.set_permissions(fs::Permissions::from_mode(old.mode() & 0o7777))?;
        // Only root may give a file away; for anyone else the new file is theirs anyway.
        let _ = std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid()));
    }
    let mut w = io::BufWriter::with_capacity(STREAM_BUFFER_BYTES, tmp.as_file());
    write(&mut w)?;
    w.flush()?;
    drop(w);
    tmp.as_file().sync_all()?;
    // On error the temporary is removed when `tmp` drops.
    tmp.persist(path).map_err(|e| e.error)?;
    // The rename is durable once the directory is synced (fsync(2)); a failure here leaves a
    // complete file, so it is not reported.
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Removes the temporaries of a target whose writer is no longer alive. Best effort: a
/// temporary that cannot be removed is left, and never one of a live process.
fn remove_stale_temporaries(dir: &Path, prefix: &std::ffi::OsStr) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.as_bytes().strip_prefix(prefix.as_bytes()) else {
            continue;
        };
        if !rest.ends_with(TEMPORARY_SUFFIX.as_bytes()) {
            continue;
        }
        let pid = rest
            .split(|b| *b == b'.')
            .next()
            .and_then(|p| std::str::from_utf8(p).ok())
            .and_then(|p| p.parse::<i32>().ok());
        if let Some(pid) = pid.filter(|p| *p > 0) {
            if !vernier_sys::process::pid_exists(pid.unsigned_abs()) {
                let _ = fs::remove_file(dir.join(OsString::from_vec(name.into_vec())));
            }
        }
    }
}

/// The terminal's width, when stdout is one; `None` also when the terminal reports a width of 0
/// (a serial console, script(1)): unknown, so nothing is narrowed for it.
pub fn terminal_width() -> Option<u16> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return None;
    }
    // SAFETY: TIOCGWINSZ fills a winsize; an all-zero one is valid.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: fd 1 is open; `ws` is a valid, writable winsize.
    let r = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) };
    (r == 0 && ws.ws_col > 0).then_some(ws.ws_col)
}

/// A Unix timestamp in nanoseconds as local time, to the second: how the terminal shows when
/// a session started.
pub fn local_time(ns: i64) -> String {
    units::time(ns, Zone::Local, TimeForm::Second)
}

/// `print!` that returns a [`StdoutError`] through `?` instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::out::write_fmt(format_args!($($arg)*))?
    };
}

/// `println!` that returns a [`StdoutError`] through `?` instead of panicking.
macro_rules! outln {
    () => {
        $crate::out::write_fmt(format_args!("\n"))?
    };
    ($($arg:tt)*) => {
        $crate::out::write_fmt(format_args!("{}\n", format_args!($($arg)*)))?
    };
}

pub(crate) use {out, outln};

/// Stored text escaped for a terminal (`vernier_model::text`, which the site and figures share).
pub use vernier_model::text::{printable, printable_lines};

/// `text` cut to at most `max` characters, the last of them `…` when it was longer: for a
/// column whose width comes from stored data (a 70,000-character host name would otherwise
/// widen every line, and a width beyond 65,535 makes `format!` panic).
pub fn clipped(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => Cow::Borrowed(text),
        Some(_) => {
            let kept: String = text.chars().take(max.saturating_sub(1)).collect();
            Cow::Owned(format!("{kept}…"))
        }
    }
}

/// The message of an error chain on one line, each cause said once: a cause whose text an outer
/// message already contains (an error that formats its source into its own message) ends the
/// chain, since the outer message said it and what caused it, and line breaks inside a message
/// become `; `.
pub fn error_line(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        let text = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        if text.is_empty() {
            continue;
        }
        // An error that put its source's text into its own message has said its sources.
        if line.contains(&text) {
            break;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    printable(&line).into_owned()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {

    #[test]
    fn clipped_text_keeps_at_most_its_characters() {
        assert_eq!(clipped("host", 4), "host");
        assert_eq!(clipped("hostname", 4), "hos…");
        assert_eq!(clipped("äöüß", 3), "äö…");
        assert_eq!(clipped(&"h".repeat(70_000), 64).chars().count(), 64);
    }

    use super::*;

    fn write_output(path: &Path, bytes: &[u8]) -> Result<()> {
        stream_output(Some(path), |w| Ok(w.write_all(bytes)?))
    }

    #[test]
    fn atomic_write_replaces_whole_file_keeps_mode_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        fs::write(&path, "old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        write_output(&path, b"new").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o640);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        // Into a missing directory: an error, and nothing created.
        let missing = dir.path().join("no/such/out.json");
        let e = format!("{:#}", write_output(&missing, b"x").unwrap_err());
        assert!(
            e.ends_with("no/such does not exist; create it first or give another path"),
            "{e}"
        );
        assert!(!e.contains(".vernier-"), "{e}");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn stale_temporaries_of_dead_writers_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        // A writer that has exited (and been reaped) and one that is alive: this process.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let stale = dir
            .path()
            .join(format!(".out.json.vernier-{dead}.abc123.tmp"));
        let live = dir.path().join(format!(
            ".out.json.vernier-{}.def456.tmp",
            std::process::id()
        ));
        let other = dir.path().join(".other.json.vernier-1.x.tmp");
        for p in [&stale, &live, &other] {
            fs::write(p, "partial").unwrap();
        }
        write_output(&path, b"new").unwrap();
        assert!(!stale.exists(), "a dead writer's temporary is removed");
        assert!(live.exists(), "a live writer's temporary is kept");
        assert!(other.exists(), "another target's temporary is not touched");
    }

    #[test]
    fn error_chains_say_each_cause_once() {
        // An error that formats its source into its own message, as thiserror's `{0}` does.
        #[derive(Debug)]
        struct Outer(std::num::ParseIntError);
        impl fmt::Display for Outer {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "invalid value 'x': {}", self.0)
            }
        }
        impl std::error::Error for Outer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let Err(inner) = "x".parse::<u32>() else {
            unreachable!()
        };
        let e = anyhow::Error::new(Outer(inner)).context("spec 'yield'");
        assert_eq!(
            error_line(&e),
            "spec 'yield': invalid value 'x': invalid digit found in string"
        );
        let e = anyhow::anyhow!("first\nsecond\n").context("outer");
        assert_eq!(error_line(&e), "outer: first; second");
    }
}
