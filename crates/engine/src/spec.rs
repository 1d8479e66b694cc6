//! The spec syntax: `benchmark[:option=value[,value...]]...`.
//!
//! A comma-separated list of values is a sweep; a spec with sweeps expands to the cross-product
//! of its values, in the order the options were written (the last option varies fastest).

/// A parsed spec, before it is checked against the benchmark's options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    pub benchmark: String,
    /// Options in the order written, each with one or more values.
    pub options: Vec<(String, Vec<String>)>,
}

/// Why a spec could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("empty spec: expected BENCHMARK[:OPTION=VALUE[,VALUE...]]...")]
    Empty,
    #[error("spec '{spec}': '{part}' is not OPTION=VALUE")]
    NotAssignment { spec: String, part: String },
    #[error("spec '{spec}': option '{option}' has an empty value or an empty sweep element")]
    EmptyValue { spec: String, option: String },
    #[error("spec '{spec}': option '{option}' is given twice")]
    Duplicate { spec: String, option: String },
}

/// Parses one spec.
pub fn parse_spec(text: &str) -> Result<Spec, SpecError> {
    let text = text.trim();
    let mut parts = text.split(':');
    let benchmark = parts.next().unwrap_or("").trim();
    if benchmark.is_empty() {
        return Err(SpecError::Empty);
    }
    let mut options: Vec<(String, Vec<String>)> = Vec::new();
    for part in parts {
        let Some((name, values)) = part.split_once('=') else {
            return Err(SpecError::NotAssignment {
                spec: text.to_string(),
                part: part.to_string(),
            });
        };
        let name = name.trim();
        if name.is_empty() {
            return Err(SpecError::NotAssignment {
                spec: text.to_string(),
                part: part.to_string(),
            });
        }
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
        if values.iter().any(String::is_empty) {
            return Err(SpecError::EmptyValue {
                spec: text.to_string(),
                option: name.to_string(),
            });
        }
        if options.iter().any(|(n, _)| n == name) {
            return Err(SpecError::Duplicate {
                spec: text.to_string(),
                option: name.to_string(),
            });
        }
        options.push((name.to_string(), values));
    }
    Ok(Spec {
        benchmark: benchmark.to_string(),
        options,
    })
}

impl Spec {
    /// The cross-product of the sweeps: one list of `(option, value)` per configuration.
    pub fn expand(&self) -> Vec<Vec<(String, String)>> {
        let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
        for (name, values) in &self.options {
            combos = combos
                .into_iter()
                .flat_map(|prefix| {
                    values.iter().map(move |v| {
                        let mut c = prefix.clone();
                        c.push((name.clone(), v.clone()));
                        c
                    })
                })
                .collect();
        }
        combos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_benchmark() {
        assert_eq!(
            parse_spec("pipe").unwrap(),
            Spec {
                benchmark: "pipe".into(),
                options: vec![]
            }
        );
        assert_eq!(parse_spec("pipe").unwrap().expand(), vec![vec![]]);
    }

    #[test]
    fn sweep_expands_to_cross_product_in_written_order() {
        let spec = parse_spec("hackbench:groups=4,8,16:ipc=pipe,socket").unwrap();
        let combos = spec.expand();
        assert_eq!(combos.len(), 6);
        let pair = |g: &str, i: &str| {
            vec![
                ("groups".to_string(), g.to_string()),
                ("ipc".to_string(), i.to_string()),
            ]
        };
        assert_eq!(combos[0], pair("4", "pipe"));
        assert_eq!(combos[1], pair("4", "socket"));
        assert_eq!(combos[5], pair("16", "socket"));
    }

    #[test]
    fn rejects_malformed_specs() {
        assert_eq!(parse_spec(""), Err(SpecError::Empty));
        assert_eq!(parse_spec(":groups=1"), Err(SpecError::Empty));
        assert!(matches!(
            parse_spec("hackbench:groups"),
            Err(SpecError::NotAssignment { .. })
        ));
        assert!(matches!(
            parse_spec("hackbench:groups="),
            Err(SpecError::EmptyValue { .. })
        ));
        assert!(matches!(
            parse_spec("hackbench:groups=4,,8"),
            Err(SpecError::EmptyValue { .. })
        ));
        assert!(matches!(
            parse_spec("hackbench:groups=4:groups=8"),
            Err(SpecError::Duplicate { .. })
        ));
        assert!(matches!(
            parse_spec("hackbench:=4"),
            Err(SpecError::NotAssignment { .. })
        ));
    }
}
