//! How far each configuration of a session has been recorded (schema version 12): its runs and
//! the end of the latest, kept by [`super::write::add_runs`] in the transaction that stores the
//! runs, so that a sync learns that a session has nothing new from a few rows of
//! `configurations`, whatever the length of the session ([`crate::Store::session_mark`]).

use uuid::Uuid;
use vernier_model::StopReason;

use super::codec::{parse_text, parse_uuid};
use super::Engine;
use crate::sql::args;
use crate::{ConfigurationMark, SessionMark, StoreError};

/// [`crate::Store::session_mark`].
pub(crate) fn session_mark(store: &impl Engine, id: Uuid) -> Result<SessionMark, StoreError> {
    store.read(|tx| {
        let mut mark = SessionMark::default();
        for row in tx.query(
            "SELECT id, stop_reason, run_count, last_run_ended_ns FROM configurations \
             WHERE session_id = $1",
            args![&id.to_string()],
        )? {
            let stopped = row
                .get::<Option<String>>(1)?
                .map(|s| parse_text::<StopReason>("stop reason", &s))
                .transpose()?;
            mark.configurations.insert(
                parse_uuid(&row.get::<String>(0)?)?,
                ConfigurationMark {
                    stopped,
                    runs: row.get(2)?,
                    last_run_ended_ns: row.get(3)?,
                },
            );
        }
        Ok(mark)
    })
}
