//! Runs read as a stream and handed on in parts of a bounded number, each part the session's
//! information and one configuration with some of its runs: what a reader of a file of many
//! runs (hyperfine's times, an export's runs) gives a store so that neither holds the file
//! ([`crate::hyperfine::Outline::runs`], [`crate::export::reader::read_export_parts`]). A
//! store takes such parts as they come (`vernier_store::Import::add_runs`).

use serde::de;
use vernier_model::{
    ConfigurationRecord, RunRecord, SessionInfo, StoredConfiguration, StoredSession,
};

use crate::SourceError;

/// Where the runs being gathered belong: configuration `index` (its place in the session's
/// array of configurations), `record`, of the session `info`.
pub(crate) struct Place<'a> {
    pub index: usize,
    pub info: &'a SessionInfo,
    pub record: &'a ConfigurationRecord,
}

/// What takes the parts: a function of the configuration's index and the part, or a reader's
/// own consumer that takes more than runs.
pub(crate) trait TakesParts {
    fn part(&mut self, configuration: usize, part: StoredSession) -> Result<(), SourceError>;
}

impl<F: FnMut(usize, StoredSession) -> Result<(), SourceError>> TakesParts for F {
    fn part(&mut self, configuration: usize, part: StoredSession) -> Result<(), SourceError> {
        self(configuration, part)
    }
}

/// Runs gathered into parts of at most `per_part`, each handed to `each` with the index of its
/// configuration once full or once the configuration's runs end ([`Parts::flush`]).
pub(crate) struct Parts<F> {
    per_part: usize,
    runs: Vec<RunRecord>,
    each: F,
    /// The error of `each`, kept typed (serde sees only its message).
    error: Option<SourceError>,
}

/// Memory reserved for a part at first; a part of `usize::MAX` runs (a whole configuration)
/// grows as it is read.
const FIRST_CAPACITY: usize = 10_000;

impl<F: TakesParts> Parts<F> {
    pub(crate) fn new(per_part: usize, each: F) -> Self {
        Parts {
            per_part: per_part.max(1),
            runs: Vec::new(),
            each,
            error: None,
        }
    }

    /// Adds a run of `place`, handing on the part once it is full.
    pub(crate) fn push<E: de::Error>(
        &mut self,
        place: &Place<'_>,
        run: RunRecord,
    ) -> Result<(), E> {
        if self.runs.capacity() == 0 {
            self.runs.reserve(self.per_part.min(FIRST_CAPACITY));
        }
        self.runs.push(run);
        if self.runs.len() >= self.per_part {
            self.flush(place)?;
        }
        Ok(())
    }

    /// Hands on the runs gathered, if any: the last part of a configuration.
    pub(crate) fn flush<E: de::Error>(&mut self, place: &Place<'_>) -> Result<(), E> {
        if self.runs.is_empty() {
            return Ok(());
        }
        let runs = std::mem::take(&mut self.runs);
        let part = StoredSession {
            info: place.info.clone(),
            configurations: vec![StoredConfiguration {
                record: place.record.clone(),
                runs,
                profiles: Vec::new(),
            }],
        };
        self.each.part(place.index, part).map_err(|e| self.fail(e))
    }

    /// Hands on the runs `runs` of `place`, read whole, in parts.
    pub(crate) fn hand_on<E: de::Error>(
        &mut self,
        place: &Place<'_>,
        runs: Vec<RunRecord>,
    ) -> Result<(), E> {
        for run in runs {
            self.push(place, run)?;
        }
        self.flush(place)
    }

    /// Keeps the error of a consumer and returns the error that stops serde.
    pub(crate) fn fail<E: de::Error>(&mut self, e: SourceError) -> E {
        let message = e.to_string();
        self.error = Some(e);
        E::custom(message)
    }

    /// The consumer, for what a reader hands on besides runs.
    pub(crate) fn each(&mut self) -> &mut F {
        &mut self.each
    }

    /// The error of the consumer that stopped the reading, if one did.
    pub(crate) fn take_error(&mut self) -> Option<SourceError> {
        self.error.take()
    }
}
