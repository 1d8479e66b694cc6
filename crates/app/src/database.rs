//! Opening the database with its name in every error, and reading a session back as the
//! commands show it.

use uuid::Uuid;
use vernier_model::StoredSession;
use vernier_store::{Access, Load, Location, Store, StoreError};

use crate::AppError;

/// Opens the database at `location` for `access`: the one way every command opens it. An
/// error that does not name the database gets its name.
pub fn open(location: &Location, access: Access) -> Result<Box<dyn Store>, AppError> {
    vernier_store::open(location, access).map_err(|e| naming(e, location))
}

/// A store error that names the database as it is; one that does not gets it as context.
fn naming(source: StoreError, location: &Location) -> AppError {
    if source.to_string().contains(&location.to_string()) {
        AppError::Store(source)
    } else {
        AppError::Database {
            location: location.clone(),
            source,
        }
    }
}

/// A session with what `load` asks for, and with the runs' monitor data as well when its runs
/// carry histograms: the worst case of a latency result is shown next to what its CPU did
/// (`vernier_analysis::worst_case`). Sessions without histograms are read once, as asked.
pub fn load_for_display(
    store: &dyn Store,
    id: Uuid,
    load: Load,
) -> Result<StoredSession, AppError> {
    let read = |load| {
        store
            .load_session(id, load)
            .map_err(|source| AppError::LoadSession { id, source })
    };
    let session = read(load)?;
    let has_histograms = session
        .configurations
        .iter()
        .flat_map(|c| &c.runs)
        .any(|r| !r.histograms.is_empty());
    if load.monitors || !has_histograms {
        return Ok(session);
    }
    read(Load {
        monitors: true,
        ..load
    })
}
