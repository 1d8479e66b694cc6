//! The `--setup` lists: `NAME[?][:option=value]...`, several separated by commas or given in
//! several `--setup` flags, for example `drop-caches,cooldown:seconds=5:load=0.5,governor?`.
//!
//! The syntax is vernier's one spec grammar ([`vernier_model::spec`]): a trailing `?` marks a
//! plugin optional, and a comma followed by a digit continues a value's list, so
//! `pin:cpus=0,2-3,rt` needs no quoting. Plugin names and option keys are case-insensitive.

use vernier_model::spec::{parse_spec_list, Spec, SpecError};

use crate::SetupError;

fn parse_error(e: SpecError) -> SetupError {
    SetupError::Parse {
        spec: e.spec,
        detail: e.problem.to_string(),
    }
}

/// Parses every `--setup` argument into plugin requests. Syntax only: names and options are
/// checked by [`crate::plan_setup`].
pub fn parse_setup_list<S: AsRef<str>>(args: &[S]) -> Result<Vec<Spec>, SetupError> {
    let mut specs: Vec<Spec> = Vec::new();
    for arg in args {
        for mut spec in parse_spec_list(arg.as_ref()).map_err(parse_error)? {
            spec.name.make_ascii_lowercase();
            for i in 0..spec.options.len() {
                spec.options[i].0.make_ascii_lowercase();
                if spec.options[..i]
                    .iter()
                    .any(|(k, _)| *k == spec.options[i].0)
                {
                    return Err(SetupError::Parse {
                        detail: format!("option '{}' is given twice", spec.options[i].0),
                        spec: spec.text,
                    });
                }
            }
            if specs.iter().any(|s| s.name == spec.name) {
                return Err(SetupError::Parse {
                    detail: format!("plugin '{}' is given twice", spec.name),
                    spec: spec.text,
                });
            }
            specs.push(spec);
        }
    }
    Ok(specs)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_options_and_optional_marks() {
        let specs = parse_setup_list(&[
            "drop-caches,cooldown:seconds=5:load=0.5,governor?",
            "pin:cpus=0,2-3,rt:priority=80?",
        ])
        .unwrap();
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["drop-caches", "cooldown", "governor", "pin", "rt"]);
        assert_eq!(specs[1].option("seconds"), Some("5"));
        assert_eq!(specs[1].option("load"), Some("0.5"));
        assert!(!specs[1].optional);
        assert!(specs[2].optional);
        assert_eq!(specs[3].option("cpus"), Some("0,2-3"));
        assert!(specs[4].optional);
        assert_eq!(specs[4].option("priority"), Some("80"));
        let q = parse_setup_list(&["turbo?:x=1"]).unwrap();
        assert!(q[0].optional);
        assert_eq!(q[0].option("x"), Some("1"));
        let upper = parse_setup_list(&["Cooldown:Seconds=1"]).unwrap();
        assert_eq!(upper[0].name, "cooldown");
        assert_eq!(upper[0].option("seconds"), Some("1"));
    }

    #[test]
    fn rejects_malformed_lists() {
        for bad in [
            "",
            "drop-caches,,swap-reset",
            "cooldown:seconds",
            "cooldown:=5",
            "cooldown:seconds=5:seconds=6",
            "cooldown:seconds=5:SECONDS=6",
            "3pin",
            "gov ernor",
            "rt,rt",
        ] {
            assert!(
                matches!(parse_setup_list(&[bad]), Err(SetupError::Parse { .. })),
                "{bad:?} should not parse"
            );
        }
        let e = parse_setup_list(&["rt", "rt:priority=2"]).unwrap_err();
        assert!(e.to_string().contains("twice"), "{e}");
        let e = parse_setup_list(&["cooldown:seconds"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "setup 'cooldown:seconds': 'seconds' is not OPTION=VALUE (':' separates options, \
             so no value can hold a ':')"
        );
    }
}
