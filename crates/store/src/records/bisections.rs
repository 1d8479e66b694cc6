//! Bisections (`vernier bisect`) in the store: the `bisections` table of migration 0011
//! (docs/schema.md). A row is the JSON of a [`Bisection`]; its sessions are ordinary ones,
//! tagged with its id.

use uuid::Uuid;
use vernier_model::Bisection;

use super::codec::{corrupt, from_json, to_json};
use super::Engine;
use crate::sql::args;
use crate::StoreError;

/// [`crate::Store::put_bisection`]: inserted, or replaced when its id is stored.
pub(crate) fn put_bisection(store: &mut impl Engine, b: &Bisection) -> Result<(), StoreError> {
    let definition = to_json!("bisection", b)?;
    let id = b.id.to_string();
    store.write(|tx| {
        tx.execute("DELETE FROM bisections WHERE id = $1", args![&id])?;
        tx.execute(
            "INSERT INTO bisections (id, created_at_ns, definition) VALUES ($1, $2, $3)",
            args![&id, b.created_at_ns, &definition],
        )?;
        Ok(())
    })
}

/// [`crate::Store::bisections`]: oldest first.
pub(crate) fn bisections(store: &impl Engine) -> Result<Vec<Bisection>, StoreError> {
    store.read(|tx| {
        let mut out = Vec::new();
        for row in tx.query(
            "SELECT id, definition FROM bisections ORDER BY created_at_ns, id",
            args![],
        )? {
            let id: String = row.get(0)?;
            let text: String = row.get(1)?;
            let b: Bisection = from_json!(format!("bisection {id}"), &text)?;
            if b.id.to_string() != id {
                return Err(corrupt(format!(
                    "bisection {id}: its record names {}",
                    b.id
                )));
            }
            out.push(b);
        }
        Ok(out)
    })
}

/// [`crate::Store::delete_bisection`]: whether it was stored.
pub(crate) fn delete_bisection(store: &mut impl Engine, id: Uuid) -> Result<bool, StoreError> {
    let id = id.to_string();
    store.write(|tx| Ok(tx.execute("DELETE FROM bisections WHERE id = $1", args![&id])? > 0))
}
