//! What tells the items of a figure apart (configurations, series): each item is named by
//! parts (a configuration by its options and loads, a series by its id and tags), and a label
//! shows only the parts that vary among the items, the shared ones said once in a caption, so
//! that labels stay short enough for their room on the axis.

use std::cmp::Ordering;

use vernier_model::Options;

/// The parts of a configuration's name: each option as `name=value` (by name, as in its
/// label) and its loads as one part `[load a + b]`.
pub(crate) fn config_parts(options: &Options, loads: &[String]) -> Vec<String> {
    let mut parts: Vec<String> = options.0.iter().map(|(k, v)| format!("{k}={v}")).collect();
    if !loads.is_empty() {
        parts.push(format!("[load {}]", loads.join(" + ")));
    }
    parts
}

/// Configuration parts as a label writes them: options joined by `:`, the loads after a space.
pub(crate) fn join_config(parts: &[String]) -> String {
    let mut text = String::new();
    for part in parts {
        if !text.is_empty() {
            text.push(if part.starts_with('[') { ' ' } else { ':' });
        }
        text.push_str(part);
    }
    text
}

/// The parts of a series' name (`Series::name`: a short id and tags, or a tag selector):
/// its words and its comma-separated tags, `1a2b3c4d kernel=6.8,host=x` as `1a2b3c4d`,
/// `kernel=6.8`, `host=x`.
pub(crate) fn name_parts(name: &str) -> Vec<String> {
    name.split([' ', ','])
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

/// What tells items apart, each item given by the parts of its name: the parts every item has
/// (in the first item's order), and per item the parts that not every item has, in its order.
/// A lone item shares all its parts with itself and has none of its own.
pub(crate) fn distinguish(items: &[Vec<String>]) -> (Vec<String>, Vec<Vec<String>>) {
    let common: Vec<String> = items
        .first()
        .map(|first| {
            first
                .iter()
                .filter(|p| items.iter().all(|item| item.contains(p)))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let own = items
        .iter()
        .map(|item| {
            item.iter()
                .filter(|p| !common.contains(p))
                .cloned()
                .collect()
        })
        .collect();
    (common, own)
}

/// The natural order of two configurations by the parts of their names ([`config_parts`]):
/// part by part, a part `name=value` by its name, then by its value, numbers by magnitude
/// (`groups=2` before `groups=10`) and before words, words by `word_rank` (the order in which
/// they first appear, that of the runs and tables: `same-cpu` before `cross-cpu` when it ran
/// first), then as text; fewer parts first.
pub(crate) fn natural_order(
    a: &[String],
    b: &[String],
    word_rank: &dyn Fn(&str) -> usize,
) -> Ordering {
    let value = |part: &str| -> (String, Option<f64>, String) {
        let (name, value) = part.split_once('=').unwrap_or((part, ""));
        (
            name.to_string(),
            value.parse::<f64>().ok(),
            value.to_string(),
        )
    };
    for (pa, pb) in a.iter().zip(b) {
        let ((na, xa, ta), (nb, xb, tb)) = (value(pa), value(pb));
        let by_value = match (xa, xb) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        };
        let by_rank = || {
            if xa.is_none() && xb.is_none() {
                word_rank(pa).cmp(&word_rank(pb))
            } else {
                Ordering::Equal
            }
        };
        let order = na
            .cmp(&nb)
            .then(by_value)
            .then_with(by_rank)
            .then_with(|| ta.cmp(&tb));
        if order != Ordering::Equal {
            return order;
        }
    }
    a.len().cmp(&b.len())
}

/// The order in which the figures show configurations (options and loads): their natural
/// order ([`natural_order`]), words in the order they first appear among the configurations it
/// is made of, so that a page's tables list them in the same order as its figures, and both as
/// the runs and `show` do for words (`same-cpu` before `cross-cpu`), numbers by magnitude.
pub struct ConfigOrder {
    /// Each word part (`placement=same-cpu`) and where it first appeared.
    words: std::collections::HashMap<String, usize>,
}

impl ConfigOrder {
    /// The order of `configs` (options and loads), given in the order of the runs (sessions,
    /// then positions in each).
    pub fn of<'a>(configs: impl IntoIterator<Item = (&'a Options, &'a [String])>) -> ConfigOrder {
        ConfigOrder::of_parts(configs.into_iter().map(|(o, l)| config_parts(o, l)))
    }

    /// [`ConfigOrder::of`] configurations given by their parts.
    pub(crate) fn of_parts(parts: impl IntoIterator<Item = Vec<String>>) -> ConfigOrder {
        let mut words = std::collections::HashMap::new();
        for part in parts.into_iter().flatten() {
            let next = words.len();
            words.entry(part).or_insert(next);
        }
        ConfigOrder { words }
    }

    /// The order of configurations `a` and `b`.
    pub fn cmp(
        &self,
        (a, a_loads): (&Options, &[String]),
        (b, b_loads): (&Options, &[String]),
    ) -> Ordering {
        self.cmp_parts(&config_parts(a, a_loads), &config_parts(b, b_loads))
    }

    /// The order of configurations given by their parts.
    pub(crate) fn cmp_parts(&self, a: &[String], b: &[String]) -> Ordering {
        natural_order(a, b, &|part| {
            self.words.get(part).copied().unwrap_or(usize::MAX)
        })
    }
}

/// Items given as configuration labels without the benchmark, `groups=4:ipc=pipe`, as parts.
#[cfg(test)]
pub(crate) fn parts(items: &[&str]) -> Vec<Vec<String>> {
    items
        .iter()
        .map(|i| {
            i.split(':')
                .filter(|p| !p.is_empty())
                .map(String::from)
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_varying_options_tell_configurations_apart() {
        let (common, own) = distinguish(&parts(&[
            "groups=4:ipc=pipe:loops=1000",
            "groups=8:ipc=pipe:loops=1000",
            "groups=8:ipc=socket:loops=1000",
        ]));
        assert_eq!(common, ["loops=1000"]);
        assert_eq!(
            own,
            [
                vec!["groups=4", "ipc=pipe"],
                vec!["groups=8", "ipc=pipe"],
                vec!["groups=8", "ipc=socket"]
            ]
        );
    }

    #[test]
    fn configurations_are_ordered_naturally() {
        let mut items = parts(&[
            "groups=10",
            "groups=1",
            "groups=2:ipc=socket",
            "groups=2:ipc=pipe",
            "groups=4",
            "groups=0.5",
            "groups=many",
            "",
        ]);
        items.sort_by(|a, b| natural_order(a, b, &|_| 0));
        assert_eq!(
            items.iter().map(|i| i.join(":")).collect::<Vec<_>>(),
            [
                "",
                "groups=0.5",
                "groups=1",
                "groups=2:ipc=pipe",
                "groups=2:ipc=socket",
                "groups=4",
                "groups=10",
                "groups=many"
            ]
        );
    }

    #[test]
    fn loads_follow_the_options_after_a_space() {
        let parts = vec!["groups=4".to_string(), "[load cpu + io]".to_string()];
        assert_eq!(join_config(&parts), "groups=4 [load cpu + io]");
    }

    #[test]
    fn a_series_name_splits_into_its_id_and_tags() {
        assert_eq!(
            name_parts("1a2b3c4d kernel=6.8,host=x"),
            ["1a2b3c4d", "kernel=6.8", "host=x"]
        );
        assert_eq!(name_parts("latest"), ["latest"]);
    }

    #[test]
    fn words_keep_the_order_they_ran_in_and_numbers_go_by_magnitude() {
        let ran = parts(&[
            "placement=same-cpu:size=10",
            "placement=cross-cpu:size=10",
            "placement=same-cpu:size=2",
            "placement=cross-cpu:size=2",
            "placement=free:size=2",
        ]);
        let order = ConfigOrder::of_parts(ran.clone());
        let mut items = ran;
        items.reverse();
        items.sort_by(|a, b| order.cmp_parts(a, b));
        assert_eq!(
            items.iter().map(|i| i.join(":")).collect::<Vec<_>>(),
            [
                "placement=same-cpu:size=2",
                "placement=same-cpu:size=10",
                "placement=cross-cpu:size=2",
                "placement=cross-cpu:size=10",
                "placement=free:size=2",
            ]
        );
    }
}
