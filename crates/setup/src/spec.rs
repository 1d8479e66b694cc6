//! The `--setup` syntax: `NAME[?][:option=value]...[?]`, several separated by commas or given
//! in several `--setup` flags, for example `drop-caches,cooldown:seconds=5:load=0.5,governor?`.
//!
//! Options are separated by `:` because CPU lists contain commas: `pin:cpus=0,2-3` works since
//! a comma-separated piece that starts with a digit continues the previous value rather than
//! naming a new plugin (plugin names start with a letter).

use crate::SetupError;

/// One parsed plugin request, not yet checked against the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupSpec {
    pub name: String,
    /// Options in the order given; names are lower-case.
    pub options: Vec<(String, String)>,
    /// Marked with a trailing `?`: skipped (and reported) when it cannot be applied here.
    pub optional: bool,
    /// The text as written, for messages.
    pub text: String,
}

impl SetupSpec {
    /// The value of option `name`, if given.
    pub fn option(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Parses every `--setup` argument into plugin requests. Syntax only: names and options are
/// checked by [`crate::plan_setup`].
pub fn parse_setup_list<S: AsRef<str>>(args: &[S]) -> Result<Vec<SetupSpec>, SetupError> {
    let mut items: Vec<String> = Vec::new();
    for arg in args {
        let arg = arg.as_ref();
        let mut current: Option<String> = None;
        for piece in arg.split(',') {
            let continues = piece.starts_with(|c: char| c.is_ascii_digit());
            match current.as_mut() {
                Some(item) if continues => {
                    item.push(',');
                    item.push_str(piece);
                }
                _ => {
                    if let Some(item) = current.take() {
                        items.push(item);
                    }
                    current = Some(piece.to_string());
                }
            }
        }
        if let Some(item) = current {
            items.push(item);
        }
    }
    let mut specs: Vec<SetupSpec> = Vec::new();
    for item in items {
        let spec = parse_item(&item)?;
        if specs.iter().any(|s| s.name == spec.name) {
            return Err(SetupError::Parse {
                spec: item,
                detail: format!("plugin '{}' is given twice", spec.name),
            });
        }
        specs.push(spec);
    }
    Ok(specs)
}

fn parse_item(item: &str) -> Result<SetupSpec, SetupError> {
    let err = |detail: String| SetupError::Parse {
        spec: item.to_string(),
        detail,
    };
    let text = item.trim();
    let (body, mut optional) = match text.strip_suffix('?') {
        Some(body) => (body, true),
        None => (text, false),
    };
    let mut parts = body.split(':');
    let mut name = parts.next().unwrap_or_default().trim();
    if let Some(n) = name.strip_suffix('?') {
        name = n;
        optional = true;
    }
    if name.is_empty() {
        return Err(err("empty plugin name".into()));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphabetic())
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(err(format!("bad plugin name '{name}'")));
    }
    let mut options: Vec<(String, String)> = Vec::new();
    for part in parts {
        let (key, value) = part
            .split_once('=')
            .ok_or_else(|| err(format!("option '{part}' is not of the form name=value")))?;
        let key = key.trim().to_ascii_lowercase();
        let value = value.trim();
        if key.is_empty() || value.is_empty() {
            return Err(err(format!("option '{part}' has an empty name or value")));
        }
        if options.iter().any(|(k, _)| *k == key) {
            return Err(err(format!("option '{key}' is given twice")));
        }
        options.push((key, value.to_string()));
    }
    Ok(SetupSpec {
        name: name.to_ascii_lowercase(),
        options,
        optional,
        text: text.to_string(),
    })
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
    }

    #[test]
    fn rejects_malformed_lists() {
        for bad in [
            "",
            "drop-caches,,swap-reset",
            "cooldown:seconds",
            "cooldown:=5",
            "cooldown:seconds=5:seconds=6",
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
    }
}
