//! Benchmark specs: `benchmark[:option=value[,value...]]...`, in the grammar of
//! [`vernier_model::spec`]. A list of values is a sweep; a spec with sweeps expands to the
//! cross-product of its values, in the order the options were written (the last option varies
//! fastest).

use vernier_model::spec::{parse_spec, Spec, SpecError};

/// Parses one benchmark spec; benchmarks cannot be marked optional.
pub fn parse_benchmark_spec(text: &str) -> Result<Spec, SpecError> {
    let spec = parse_spec(text)?;
    spec.not_optional()?;
    Ok(spec)
}

/// The cross-product of the sweeps of `spec`: one list of `(option, value)` per configuration.
pub fn expand(spec: &Spec) -> Vec<Vec<(String, String)>> {
    let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for (name, value) in &spec.options {
        combos = combos
            .into_iter()
            .flat_map(|prefix| {
                Spec::list(value).map(move |v| {
                    let mut c = prefix.clone();
                    c.push((name.clone(), v.to_string()));
                    c
                })
            })
            .collect();
    }
    combos
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use vernier_model::spec::SpecProblem;

    #[test]
    fn plain_benchmark_is_one_configuration() {
        let spec = parse_benchmark_spec("pipe").unwrap();
        assert_eq!(spec.name, "pipe");
        assert_eq!(expand(&spec), vec![vec![]]);
    }

    #[test]
    fn sweep_expands_to_cross_product_in_written_order() {
        let spec = parse_benchmark_spec("hackbench:groups=4,8,16:ipc=pipe,socket").unwrap();
        let combos = expand(&spec);
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
    fn rejects_malformed_and_optional_specs() {
        let problem = |text: &str| parse_benchmark_spec(text).unwrap_err().problem;
        assert_eq!(problem(""), SpecProblem::Empty);
        assert_eq!(problem(":groups=1"), SpecProblem::Empty);
        assert!(matches!(
            problem("hackbench:groups"),
            SpecProblem::NotAssignment(..)
        ));
        assert!(matches!(
            problem("hackbench:groups="),
            SpecProblem::EmptyValue(..)
        ));
        assert!(matches!(
            problem("hackbench:groups=4,,8"),
            SpecProblem::EmptyValue(..)
        ));
        assert!(matches!(
            problem("hackbench:groups=4:groups=8"),
            SpecProblem::Duplicate(..)
        ));
        assert!(matches!(
            problem("hackbench:=4"),
            SpecProblem::NotAssignment(..)
        ));
        assert_eq!(problem("pipe?"), SpecProblem::Optional);
    }
}
