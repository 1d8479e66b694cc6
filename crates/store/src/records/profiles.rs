//! The configurations' profiled runs (table `profiles`, schema version 10): each run's facts in
//! columns, its folded stacks ([`FoldedStacks`]: distinct frames and stacks) as JSON
//! compressed with DEFLATE (RFC 1951, flate2), a few KiB per run where the text of
//! `perf script` is megabytes.

use std::collections::HashMap;
use std::io::{Read, Write};

use uuid::Uuid;
use vernier_model::{FoldedStacks, ProfileRecord, ProfileScope};

use super::codec::{corrupt, stored_value};
use super::Engine;
use crate::sql::{args, Columns, Sql};
use crate::StoreError;

/// Records one profiled run of configuration `configuration`.
pub(crate) fn add(
    store: &mut impl Engine,
    configuration: Uuid,
    profile: &ProfileRecord,
) -> Result<(), StoreError> {
    add_all(store, configuration, std::slice::from_ref(profile))
}

/// Stores `profiles` of configuration `configuration` (an import's, or a recording's one).
pub(crate) fn add_all(
    store: &mut impl Engine,
    configuration: Uuid,
    profiles: &[ProfileRecord],
) -> Result<(), StoreError> {
    if profiles.is_empty() {
        return Ok(());
    }
    let encoded = profiles
        .iter()
        .map(|p| encode(&p.stacks))
        .collect::<Result<Vec<_>, _>>()?;
    store.write(|tx| {
        let key = configuration_key(tx, configuration)?;
        for (p, stacks) in profiles.iter().zip(&encoded) {
            insert_encoded(tx, key, p, stacks)?;
        }
        Ok(())
    })
}

/// Stores those of `profiles` that configuration `configuration` lacks (a copy of a session
/// that was still being recorded).
pub(crate) fn add_lacking(
    store: &mut impl Engine,
    configuration: Uuid,
    profiles: &[ProfileRecord],
) -> Result<(), StoreError> {
    if profiles.is_empty() {
        return Ok(());
    }
    let stored: Vec<Uuid> = store.write(|tx| {
        let key = configuration_key(tx, configuration)?;
        let mut ids = Vec::new();
        tx.query_each(
            "SELECT id FROM profiles WHERE configuration_key = $1",
            args![key],
            &mut |r| {
                ids.push(r.get(0)?);
                Ok(())
            },
        )?;
        Ok(ids)
    })?;
    let lacking: Vec<ProfileRecord> = profiles
        .iter()
        .filter(|p| !stored.contains(&p.id))
        .cloned()
        .collect();
    add_all(store, configuration, &lacking)
}

fn configuration_key(tx: &mut dyn Sql, configuration: Uuid) -> Result<i64, StoreError> {
    tx.query_opt(
        "SELECT key FROM configurations WHERE id = $1",
        args![&configuration.to_string()],
    )?
    .ok_or(StoreError::Unknown {
        what: "configuration",
        id: configuration,
    })?
    .get(0)
}

fn insert_encoded(
    tx: &mut dyn Sql,
    configuration_key: i64,
    p: &ProfileRecord,
    stacks: &[u8],
) -> Result<(), StoreError> {
    p.stacks
        .check()
        .map_err(|e| StoreError::Invalid(format!("profiled run {}: {e}", p.id)))?;
    let samples = i64::try_from(p.stacks.total())
        .map_err(|_| StoreError::Invalid(format!("profiled run {}: too many samples", p.id)))?;
    tx.execute(
        "INSERT INTO profiles (configuration_key, idx, id, event, frequency_hz, scope, \
         started_at_ns, ended_at_ns, value, samples, stacks) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        args![
            configuration_key,
            p.index,
            &p.id,
            &p.event,
            p.frequency_hz,
            p.scope.as_str(),
            p.started_at_ns,
            p.ended_at_ns,
            p.value.map(stored_value),
            samples,
            stacks,
        ],
    )?;
    Ok(())
}

/// The profiled runs of the configurations of session `session` (its id as stored):
/// configuration key -> its profiles in index order.
pub(crate) fn read_session(
    tx: &mut dyn Sql,
    session: &str,
) -> Result<HashMap<i64, Vec<ProfileRecord>>, StoreError> {
    let mut by_configuration: HashMap<i64, Vec<ProfileRecord>> = HashMap::new();
    tx.query_each(
        "SELECT p.configuration_key, p.idx, p.id, p.event, p.frequency_hz, p.scope, \
         p.started_at_ns, p.ended_at_ns, p.value, p.stacks \
         FROM configurations c CROSS JOIN profiles p \
         WHERE c.session_id = $1 AND p.configuration_key = c.key \
         ORDER BY p.configuration_key, p.idx",
        args![session],
        &mut |r| {
            let key: i64 = r.get(0)?;
            let id: Uuid = r.get(2)?;
            let unsigned = |i: usize| -> Result<u32, StoreError> {
                let v: i64 = r.get(i)?;
                u32::try_from(v).map_err(|_| corrupt(format!("profiled run {id}: field {i}")))
            };
            let scope: ProfileScope = r
                .text(5)?
                .parse()
                .map_err(|e| corrupt(format!("profiled run {id}: {e}")))?;
            let profile = ProfileRecord {
                id,
                index: unsigned(1)?,
                event: r.text(3)?.to_string(),
                frequency_hz: unsigned(4)?,
                scope,
                started_at_ns: r.get(6)?,
                ended_at_ns: r.get(7)?,
                value: r.get(8)?,
                stacks: decode(r.blob(9)?)
                    .map_err(|e| corrupt(format!("profiled run {id}: {e}")))?,
            };
            by_configuration.entry(key).or_default().push(profile);
            Ok(())
        },
    )?;
    Ok(by_configuration)
}

/// The stored form of folded stacks: their JSON, deflated.
pub(crate) fn encode(stacks: &FoldedStacks) -> Result<Vec<u8>, StoreError> {
    let json = serde_json::to_vec(stacks)
        .map_err(|e| StoreError::Invalid(format!("folded stacks: {e}")))?;
    let mut encoder =
        flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    encoder
        .write_all(&json)
        .and_then(|_| encoder.finish())
        .map_err(|e| StoreError::Invalid(format!("folded stacks: {e}")))
}

fn decode(bytes: &[u8]) -> Result<FoldedStacks, String> {
    let mut json = Vec::new();
    flate2::read::DeflateDecoder::new(bytes)
        .read_to_end(&mut json)
        .map_err(|e| format!("stacks cannot be inflated: {e}"))?;
    let stacks: FoldedStacks = serde_json::from_slice(&json).map_err(|e| format!("stacks: {e}"))?;
    stacks.check()?;
    Ok(stacks)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn stacks_round_trip_compressed() {
        let text: String = (0..200)
            .map(|i| format!("main;work_{};kmem_cache_alloc_[k] {}\n", i % 20, i + 1))
            .collect();
        let stacks = FoldedStacks::from_folded(&text).unwrap();
        let bytes = encode(&stacks).unwrap();
        assert!(bytes.len() < text.len() / 4, "{} bytes", bytes.len());
        assert_eq!(decode(&bytes).unwrap(), stacks);
        assert!(decode(&bytes[..bytes.len() / 2]).is_err());
    }
}
