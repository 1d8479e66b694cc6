//! Session selectors, the grammar every backend shares: `latest`, `latest~N`, a (prefix of a)
//! session id, or terms `KEY=VALUE[,KEY=VALUE...]` (tags, and `host=NAME` for the machine).
//! Only parsing lives here; a backend answers the parsed selector with its own queries
//! ([`crate::Store::resolve`], [`crate::Store::find_sessions_by_tags`]).

use uuid::Uuid;

use crate::StoreError;

/// Shortest id prefix a selector may give: shorter prefixes collide too soon to be useful.
const MIN_PREFIX_HEX_DIGITS: usize = 4;

const SELECTOR_FORMS: &str = "expected 'latest', 'latest~N', at least 4 hex digits of a \
     session id, or tags KEY=VALUE[,KEY=VALUE...] (host=NAME for the machine)";

/// The term key that names the machine a session ran on rather than a tag.
const HOST_KEY: &str = "host";
/// A prefix that makes a term a tag whatever its key: `tag:host=x` is the tag `host`.
const TAG_PREFIX: &str = "tag:";

/// What a selector of terms asks for: every session carrying all of `tags` and run on every
/// one of `hosts` (a hostname or a machine id, [`crate::SessionHeader::ran_on`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionFilter {
    pub tags: Vec<(String, String)>,
    pub hosts: Vec<String>,
}

/// What a session selector names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// `latest` (0) or `latest~N` (N).
    Latest(usize),
    Id(Uuid),
    /// Lowercase hex digits that start a session id (hyphens removed).
    Prefix(String),
}

/// A selector of one session; tag selectors are told apart first by [`parse_tag_selector`].
pub fn parse_selector(selector: &str) -> Result<Selector, StoreError> {
    let invalid = || StoreError::NotFound {
        selector: selector.to_string(),
        detail: SELECTOR_FORMS.to_string(),
    };
    let text = selector.trim();
    if text == "latest" {
        return Ok(Selector::Latest(0));
    }
    if let Some(n) = text.strip_prefix("latest~") {
        return n.parse().map(Selector::Latest).map_err(|_| invalid());
    }
    if let Ok(id) = Uuid::parse_str(text) {
        return Ok(Selector::Id(id));
    }
    // Hyphens are ignored so a prefix copied from either UUID form matches.
    let digits: String = text
        .chars()
        .filter(|c| *c != '-')
        .map(|c| c.to_ascii_lowercase())
        .collect();
    if digits.len() >= MIN_PREFIX_HEX_DIGITS && digits.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(Selector::Prefix(digits))
    } else {
        Err(invalid())
    }
}

/// The terms of a tag selector, or `None` for a selector of one session (`latest`, an id).
///
/// Grammar: a selector with an `=` outside an escape is a list of `KEY=VALUE` terms separated
/// by commas; a session matches all of them to be selected. Keys end at the first `=`; values
/// may hold further `=`. In keys and values, `\,` stands for a comma, `\=` for an equals sign
/// and `\\` for a backslash, so a tag `kernel=6.18,rc1` is selected by `kernel=6.18\,rc1`.
/// A backslash before any other character stands for itself. Spaces around keys and values
/// are dropped, as `--tag` drops them.
///
/// The key `host` names the machine (`host=NAME`: its hostname or machine id); every other key
/// a tag. A key starting with `tag:` is a tag named by the rest, so a tag called `host` is
/// selected by `tag:host=VALUE`.
pub fn parse_tag_selector(selector: &str) -> Result<Option<SessionFilter>, StoreError> {
    let invalid = |detail: String| StoreError::NotFound {
        selector: selector.to_string(),
        detail,
    };
    // Split into terms at unescaped commas, and each term at its first unescaped `=`.
    let mut terms: Vec<(String, Option<String>)> = vec![(String::new(), None)];
    let mut any_equals = false;
    let mut chars = selector.chars();
    while let Some(c) = chars.next() {
        let Some((key, value)) = terms.last_mut() else {
            break;
        };
        let in_key = value.is_none();
        let current = value.as_mut().unwrap_or(key);
        match c {
            '\\' => match chars.next() {
                Some(e @ (',' | '=' | '\\')) => current.push(e),
                Some(other) => {
                    current.push('\\');
                    current.push(other);
                }
                None => current.push('\\'),
            },
            ',' => terms.push((String::new(), None)),
            '=' if in_key => {
                any_equals = true;
                *value = Some(String::new());
            }
            other => current.push(other),
        }
    }
    if !any_equals {
        return Ok(None);
    }
    let mut filter = SessionFilter::default();
    for (key, value) in terms {
        let key = key.trim();
        let tag_key = key.strip_prefix(TAG_PREFIX).map(str::trim);
        match value {
            Some(value) if key == HOST_KEY => filter.hosts.push(value.trim().to_string()),
            Some(value) if !tag_key.unwrap_or(key).is_empty() => {
                let key = tag_key.unwrap_or(key);
                filter
                    .tags
                    .push((key.to_string(), value.trim().to_string()));
            }
            _ => {
                return Err(invalid(format!(
                    "'{key}' is not KEY=VALUE (a comma inside a key or value is written \\,)"
                )))
            }
        }
    }
    Ok(Some(filter))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn selectors_parse() {
        assert_eq!(parse_selector("latest").ok(), Some(Selector::Latest(0)));
        assert_eq!(parse_selector(" latest~3 ").ok(), Some(Selector::Latest(3)));
        let id = Uuid::parse_str("0123abcd-0000-4000-8000-000000000001").unwrap();
        assert_eq!(
            parse_selector("0123ABCD-0000-4000-8000-000000000001").ok(),
            Some(Selector::Id(id))
        );
        assert_eq!(
            parse_selector("0123abcd000040008000000000000001").ok(),
            Some(Selector::Id(id))
        );
        assert_eq!(
            parse_selector("0123AB").ok(),
            Some(Selector::Prefix("0123ab".into()))
        );
        assert_eq!(
            parse_selector("0123abcd-00").ok(),
            Some(Selector::Prefix("0123abcd00".into()))
        );
    }

    #[test]
    fn tag_selectors_split_at_unescaped_commas_and_equals_signs() {
        let tags = |s: &str| parse_tag_selector(s).unwrap();
        let pairs = |p: &[(&str, &str)]| {
            Some(SessionFilter {
                tags: p
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                hosts: Vec::new(),
            })
        };
        assert_eq!(tags("latest"), None);
        assert_eq!(tags("0123abcd"), None);
        assert_eq!(tags("a\\=b"), None, "an escaped = makes no tag selector");
        assert_eq!(tags("kernel=A"), pairs(&[("kernel", "A")]));
        assert_eq!(
            tags(" kernel = A , tuned=b "),
            pairs(&[("kernel", "A"), ("tuned", "b")])
        );
        assert_eq!(tags("k=6.18\\,rc1"), pairs(&[("k", "6.18,rc1")]));
        assert_eq!(tags("k=a=b"), pairs(&[("k", "a=b")]));
        assert_eq!(tags("k\\=x=v"), pairs(&[("k=x", "v")]));
        assert_eq!(
            tags("k=back\\\\,j=2"),
            pairs(&[("k", "back\\"), ("j", "2")])
        );
        assert_eq!(tags("k=c:\\path"), pairs(&[("k", "c:\\path")]));
        assert_eq!(tags("k="), pairs(&[("k", "")]));
        for bad in ["k=a,b", "=a", "k=a,,j=b", "k=a,", "tag:=a"] {
            assert!(
                matches!(parse_tag_selector(bad), Err(StoreError::NotFound { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn host_names_the_machine_and_tag_prefix_names_any_tag() {
        let parsed = parse_tag_selector(" host = box1 ,kernel=A")
            .unwrap()
            .unwrap();
        assert_eq!(parsed.hosts, ["box1"]);
        assert_eq!(parsed.tags, [("kernel".to_string(), "A".to_string())]);
        let parsed = parse_tag_selector("tag:host=box1,tag: tag:x =y")
            .unwrap()
            .unwrap();
        assert!(parsed.hosts.is_empty());
        assert_eq!(
            parsed.tags,
            [
                ("host".to_string(), "box1".to_string()),
                ("tag:x".to_string(), "y".to_string())
            ]
        );
        let only_host = parse_tag_selector("host=3d1219c7").unwrap().unwrap();
        assert!(only_host.tags.is_empty());
    }

    #[test]
    fn bad_selectors_list_the_valid_forms() {
        for bad in [
            "",
            "lat",
            "abc",
            "latest~",
            "latest~-1",
            "latest~x",
            "xyz12345",
            "newest",
        ] {
            match parse_selector(bad) {
                Err(StoreError::NotFound { selector, detail }) => {
                    assert_eq!(selector, bad);
                    assert!(detail.contains("latest~N"), "{detail}");
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
    }
}
