//! Raw file descriptors for code that must stay async-signal-safe (signal-safety(7)), such as
//! the workers a benchmark forks from a multi-threaded process: pipes, and reads and writes
//! that retry partial transfers and EINTR without allocating.

use std::os::fd::{FromRawFd, OwnedFd, RawFd};

use crate::SysError;

/// The errno of the last failed libc call (thread-local; allocation-free).
#[inline]
fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// A pipe(2) as (read end, write end). O_CLOEXEC keeps the descriptors out of programs that
/// anything else in the process might exec; forked children keep them.
pub fn pipe() -> Result<(OwnedFd, OwnedFd), SysError> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(SysError::last_os("pipe2"));
    }
    // SAFETY: pipe2 just made both descriptors, and nothing else owns them.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Writes all of `buf`, retrying partial writes and EINTR. Async-signal-safe.
#[inline]
pub fn write_all(fd: RawFd, buf: &[u8]) -> bool {
    let mut done = 0;
    while done < buf.len() {
        let rest = &buf[done..];
        // SAFETY: `rest` is a valid readable buffer of the given length.
        let n = unsafe { libc::write(fd, rest.as_ptr().cast(), rest.len()) };
        if n > 0 {
            done += n as usize;
        } else if n < 0 && errno() == libc::EINTR {
            continue;
        } else {
            return false;
        }
    }
    true
}

/// Fills all of `buf`, retrying partial reads and EINTR; false on error or end of file.
/// Async-signal-safe.
#[inline]
pub fn read_exact(fd: RawFd, buf: &mut [u8]) -> bool {
    let mut done = 0;
    while done < buf.len() {
        let rest = &mut buf[done..];
        // SAFETY: `rest` is a valid writable buffer of the given length.
        let n = unsafe { libc::read(fd, rest.as_mut_ptr().cast(), rest.len()) };
        if n > 0 {
            done += n as usize;
        } else if n < 0 && errno() == libc::EINTR {
            continue;
        } else {
            return false;
        }
    }
    true
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn what_is_written_to_a_pipe_is_read_whole_and_its_end_is_seen() {
        let (r, w) = pipe().unwrap();
        assert!(write_all(w.as_raw_fd(), b"ping"));
        let mut buf = [0u8; 4];
        assert!(read_exact(r.as_raw_fd(), &mut buf));
        assert_eq!(&buf, b"ping");
        drop(w);
        assert!(!read_exact(r.as_raw_fd(), &mut buf), "end of file");
    }
}
