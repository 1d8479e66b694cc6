//! Ids of imported records that are derived from the file they came from, so that importing a
//! file again stores nothing new.

use sha2::{Digest, Sha256};
use uuid::Uuid;

/// Ids derived from a SHA-256 of length-prefixed parts: the same file always gives the same
/// ids, which makes a repeated import a no-op. A prefix (the file) is hashed once and the
/// state cloned for each id below it, so deriving an id per run stays linear in the file.
#[derive(Clone)]
pub(crate) struct IdHasher(Sha256);

impl IdHasher {
    pub(crate) fn new() -> Self {
        IdHasher(Sha256::new())
    }

    pub(crate) fn part(mut self, p: &[u8]) -> Self {
        self.0.update((p.len() as u64).to_le_bytes());
        self.0.update(p);
        self
    }

    /// Starts a part of `len` bytes, which [`IdHasher::update`] then gives piece by piece: the
    /// same hash as [`IdHasher::part`] of the whole, for bytes read as a stream.
    pub(crate) fn begin(mut self, len: u64) -> Self {
        self.0.update(len.to_le_bytes());
        self
    }

    pub(crate) fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// A UUID version 8 ("custom") from the first 16 bytes of the digest.
    pub(crate) fn id(self) -> Uuid {
        let digest = self.0.finalize();
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&digest[..16]);
        uuid::Builder::from_custom_bytes(bytes).into_uuid()
    }
}
