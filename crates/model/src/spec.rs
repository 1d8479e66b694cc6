//! The one grammar of vernier's `NAME:key=value` specs, shared by benchmark specs
//! (`vernier run hackbench:groups=4,8`), setup plugins (`--setup pin:cpus=0,2-3,governor?`)
//! and monitors (`--monitor default,stat:interval=0.1`). This module only parses; what a name
//! or an option means is checked by its owner (the engine's plan, the setup plan, the monitor
//! registry).
//!
//! ```text
//! list    = spec *( "," spec )              ; --setup, --monitor
//! spec    = name [ "?" ] *( ":" option ) [ "?" ]
//! option  = key "=" value
//! value   = element *( "," element )        ; a value may hold a list
//! name    = letter *( letter / digit / "-" / "_" )
//! ```
//!
//! The comma separates the elements of a value's list and, in a list, the specs. A lone spec
//! (a benchmark SPEC argument) has no list around it, so every comma after `=` separates list
//! elements: `hackbench:ipc=pipe,socket`. In a list, a piece after a comma continues the
//! value before it when it starts with a digit and starts the next spec otherwise, since names
//! start with a letter: `pin:cpus=0,2-3,rt` is the CPU list `0,2-3` followed by `rt`. So within
//! a list, elements after the first must start with a digit (CPU lists, numbers).
//!
//! What a list means belongs to the option: a sweep for a benchmark option, a CPU list for
//! `pin:cpus`; options that take one value reject a list. A trailing `?` on the name or the
//! whole spec marks it optional, which only `--setup` accepts. Whitespace around names, keys,
//! values and elements is ignored; option keys may be given once per spec.

/// One parsed spec, before its owner checks the name and the options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    pub name: String,
    /// Options in the order written. A value's list elements are joined by `,` without
    /// whitespace; [`Spec::list`] splits them.
    pub options: Vec<(String, String)>,
    /// Marked with a trailing `?`.
    pub optional: bool,
    /// The spec as written, trimmed, for messages.
    pub text: String,
}

/// Why a spec does not parse, in one line: the spec as written and the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("spec '{spec}': {problem}")]
pub struct SpecError {
    pub spec: String,
    pub problem: SpecProblem,
}

/// What is wrong with a spec, naming what is valid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecProblem {
    #[error("empty name: expected NAME[:OPTION=VALUE[,VALUE...]]...")]
    Empty,
    #[error("bad name '{0}': a name starts with a letter and holds letters, digits, '-' and '_'")]
    BadName(String),
    #[error("'{0}' is not OPTION=VALUE (':' separates options, so no value can hold a ':')")]
    NotAssignment(String),
    #[error(
        "option '{0}' has an empty value or an empty list element (expected {0}=VALUE[,VALUE...])"
    )]
    EmptyValue(String),
    #[error("option '{0}' is given twice")]
    Duplicate(String),
    #[error("only --setup plugins can be marked optional with '?'")]
    Optional,
    /// A spec is recorded with the session, where vernier stores no control character
    /// ([`crate::text`]).
    #[error(
        "contains the control character {}; a spec is one line of printable text (a command of \
         several lines joins them with ';')",
        crate::text::control_name(*.0)
    )]
    Control(char),
}

impl Spec {
    /// The value of option `key` as written (list elements joined by `,`), if given.
    pub fn option(&self, key: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The list elements of a value.
    pub fn list(value: &str) -> impl Iterator<Item = &str> {
        value.split(',')
    }

    /// Fails when the spec is marked optional, for the owners that have no optional specs.
    pub fn not_optional(&self) -> Result<(), SpecError> {
        if self.optional {
            return Err(SpecError {
                spec: self.text.clone(),
                problem: SpecProblem::Optional,
            });
        }
        Ok(())
    }
}

/// Parses one spec on its own (a benchmark SPEC argument): every comma separates list
/// elements.
pub fn parse_spec(text: &str) -> Result<Spec, SpecError> {
    let text = text.trim();
    let err = |problem| SpecError {
        spec: text.to_string(),
        problem,
    };
    if let Some(c) = crate::text::first_control(text) {
        return Err(err(SpecProblem::Control(c)));
    }
    let (body, mut optional) = match text.strip_suffix('?') {
        Some(body) => (body, true),
        None => (text, false),
    };
    let mut parts = body.split(':');
    let mut name = parts.next().unwrap_or_default().trim();
    if let Some(n) = name.strip_suffix('?') {
        name = n.trim_end();
        optional = true;
    }
    if name.is_empty() {
        return Err(err(SpecProblem::Empty));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphabetic())
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(err(SpecProblem::BadName(name.to_string())));
    }
    let mut options: Vec<(String, String)> = Vec::new();
    for part in parts {
        let not_assignment = || err(SpecProblem::NotAssignment(part.to_string()));
        let (key, value) = part.split_once('=').ok_or_else(not_assignment)?;
        let key = key.trim();
        if key.is_empty() {
            return Err(not_assignment());
        }
        let elements: Vec<&str> = value.split(',').map(str::trim).collect();
        if elements.iter().any(|e| e.is_empty()) {
            return Err(err(SpecProblem::EmptyValue(key.to_string())));
        }
        if options.iter().any(|(k, _)| k == key) {
            return Err(err(SpecProblem::Duplicate(key.to_string())));
        }
        options.push((key.to_string(), elements.join(",")));
    }
    Ok(Spec {
        name: name.to_string(),
        options,
        optional,
        text: text.to_string(),
    })
}

/// Splits a comma-separated list into its specs' texts: a piece that starts with a digit
/// continues the value before it (see the module documentation).
pub fn split_spec_list(text: &str) -> Vec<&str> {
    let mut items: Vec<&str> = Vec::new();
    let mut start = 0;
    let mut offset = 0;
    for (i, piece) in text.split(',').enumerate() {
        let continues = i > 0
            && piece.trim_start().starts_with(|c: char| c.is_ascii_digit())
            && text[start..offset].contains('=');
        if i > 0 && !continues {
            items.push(&text[start..offset - 1]);
            start = offset;
        }
        offset += piece.len() + 1;
    }
    items.push(&text[start..]);
    items
}

/// Parses a comma-separated list of specs (`--setup`, `--monitor`).
pub fn parse_spec_list(text: &str) -> Result<Vec<Spec>, SpecError> {
    split_spec_list(text).into_iter().map(parse_spec).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn names(specs: &[Spec]) -> Vec<&str> {
        specs.iter().map(|s| s.name.as_str()).collect()
    }

    #[test]
    fn a_lone_spec_takes_every_comma_as_a_list_separator() {
        let s = parse_spec("hackbench:groups=4, 8,16:ipc=pipe,socket").unwrap();
        assert_eq!(s.name, "hackbench");
        assert_eq!(s.option("groups"), Some("4,8,16"));
        assert_eq!(
            Spec::list(s.option("ipc").unwrap()).collect::<Vec<_>>(),
            ["pipe", "socket"]
        );
        assert!(!s.optional);
        assert_eq!(parse_spec(" pipe ").unwrap().options, vec![]);
    }

    #[test]
    fn a_list_continues_values_with_digits_and_starts_specs_with_letters() {
        let specs = parse_spec_list("drop-caches,cooldown:seconds=5:load=0.5,governor?").unwrap();
        assert_eq!(names(&specs), ["drop-caches", "cooldown", "governor"]);
        assert_eq!(specs[1].option("load"), Some("0.5"));
        assert!(specs[2].optional);

        let specs = parse_spec_list("pin:cpus=0,2-3,rt:priority=80?").unwrap();
        assert_eq!(names(&specs), ["pin", "rt"]);
        assert_eq!(specs[0].option("cpus"), Some("0,2-3"));
        assert!(specs[1].optional);
        assert_eq!(specs[1].option("priority"), Some("80"));

        let specs = parse_spec_list("stat:interval=0.1, interrupts:top=3:interval=2,perf").unwrap();
        assert_eq!(names(&specs), ["stat", "interrupts", "perf"]);
        assert_eq!(specs[1].text, "interrupts:top=3:interval=2");

        // A digit after a name without options is not a value to continue.
        assert!(parse_spec_list("turbo,3").is_err());
        let q = parse_spec_list("turbo?:x=1").unwrap();
        // Text that would be recorded raw: one line of printable characters.
        let e = parse_spec("command:cmd=printf a\rb").unwrap_err();
        assert_eq!(e.problem, SpecProblem::Control('\r'));
        assert!(
            e.to_string().contains("the control character CR (U+000D)"),
            "{e}"
        );
        assert!(parse_spec_list("stat:interval=0.1,x\u{1b}").is_err());
        assert!(q[0].optional);
        assert_eq!(q[0].option("x"), Some("1"));
    }

    #[test]
    fn splitting_keeps_the_text_of_each_spec() {
        assert_eq!(
            split_spec_list("a:x=1,2,b,c:y=3"),
            ["a:x=1,2", "b", "c:y=3"]
        );
        assert_eq!(split_spec_list(""), [""]);
        assert_eq!(split_spec_list("a,,b"), ["a", "", "b"]);
    }

    #[test]
    fn errors_are_one_line_and_name_the_problem() {
        let cases: &[(&str, &str)] = &[
            ("", "empty name"),
            (":groups=1", "spec ':groups=1': empty name"),
            ("3pin", "bad name '3pin'"),
            ("gov ernor", "bad name"),
            ("hackbench:groups", "'groups' is not OPTION=VALUE"),
            ("hackbench:=4", "is not OPTION=VALUE"),
            ("hackbench:groups=", "empty value or an empty list element"),
            ("hackbench:groups=4,,8", "empty list element"),
            (
                "hackbench:groups=4:groups=8",
                "option 'groups' is given twice",
            ),
        ];
        for (text, message) in cases {
            let e = parse_spec(text).unwrap_err().to_string();
            assert!(e.contains(message), "{text:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        for bad in ["", "drop-caches,,swap-reset", "cooldown:seconds", "a,3pin"] {
            assert!(parse_spec_list(bad).is_err(), "{bad:?}");
        }
        let e = parse_spec("pipe?").unwrap().not_optional().unwrap_err();
        assert!(e.to_string().contains("only --setup"), "{e}");
        parse_spec("pipe").unwrap().not_optional().unwrap();
    }
}
