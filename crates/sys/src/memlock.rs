//! Locking a process's memory in RAM (mlockall(2)), as real-time measurements do (cyclictest
//! `-m`): every page mapped now is faulted in and stays resident, and so is every page mapped
//! later (MCL_FUTURE), so that a measuring loop never waits for a page fault or for swap.

use crate::SysError;

/// Locks every current and future page of the calling process (MCL_CURRENT | MCL_FUTURE).
/// The soft RLIMIT_MEMLOCK is raised to the hard one first, since without CAP_IPC_LOCK the
/// kernel refuses when the process maps more than the soft limit (mm/mlock.c). Lasts until
/// [`unlock_all`] or the end of the process.
pub fn lock_all() -> Result<(), SysError> {
    // A failure leaves the soft limit, and mlockall reports what that means.
    crate::limits::raise_soft_limit(crate::limits::Resource::LockedMemory, u64::MAX);
    // SAFETY: mlockall has no memory-safety preconditions.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } != 0 {
        return Err(SysError::last_os("mlockall"));
    }
    Ok(())
}

/// Undoes [`lock_all`]: pages may be paged out again and new mappings are not locked.
pub fn unlock_all() {
    // SAFETY: munlockall has no preconditions; it cannot fail for an unprivileged process.
    unsafe { libc::munlockall() };
}
