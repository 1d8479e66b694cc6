//! What the site's tests share: a site built from sessions in memory, and its files read as a
//! browser's tokenizer reads them (html5gum, WHATWG): well-formedness, the elements and
//! attributes it holds, its text as a reader sees it, and its links.

#![allow(clippy::unwrap_used, dead_code)]

use std::collections::{BTreeMap, BTreeSet};

use html5gum::{Token, Tokenizer};
use vernier_analysis::CompareSettings;
use vernier_model::StoredSession;
use vernier_site::{Comparison, Input, Site};

pub use vernier_testkit::site::start_tags;

/// Every file of the site of `input`, by path, as text; the order is [`Site::paths`]'s.
pub fn site(input: Input) -> BTreeMap<String, String> {
    vernier_site::build(input)
        .unwrap()
        .into_iter()
        .map(|(path, bytes)| (path, String::from_utf8(bytes).unwrap()))
        .collect()
}

/// The site of `sessions`, a series each.
pub fn site_of(sessions: Vec<StoredSession>) -> BTreeMap<String, String> {
    site(Input {
        sessions,
        ..Input::default()
    })
}

/// `vernier compare BASE NEW` of two selections named `base` and `new`, with the defaults.
pub fn comparison(
    base: (&str, &[StoredSession]),
    new: (&str, &[StoredSession]),
) -> Option<Comparison> {
    Some(Comparison {
        base: base.0.to_string(),
        new: new.0.to_string(),
        report: vernier_analysis::compare(base.1, new.1, &CompareSettings::default()).unwrap(),
        base_sessions: base.1.iter().map(|s| s.info.id).collect(),
        new_sessions: new.1.iter().map(|s| s.info.id).collect(),
    })
}

/// The one file whose path starts with `prefix` and ends with `suffix`.
pub fn file<'a>(site: &'a BTreeMap<String, String>, prefix: &str, suffix: &str) -> &'a str {
    let found: Vec<&String> = site
        .keys()
        .filter(|p| p.starts_with(prefix) && p.ends_with(suffix))
        .collect();
    assert_eq!(found.len(), 1, "{prefix}*{suffix} in {:?}", site.keys());
    &site[found[0]]
}

/// HTML elements without an end tag.
const VOID: &[&str] = &["meta", "link", "img", "wbr", "br", "input"];

/// Panics unless `text` (a page or a figure) is well-formed as a browser's tokenizer reads it:
/// no parse error (a duplicate attribute, a NUL, a bad character reference), every element
/// closed in the order it was opened (void elements and SVG's self-closing ones need no end
/// tag), one `<!DOCTYPE html>` heading a page; and, as XML requires of a figure, no character
/// that XML 1.0 does not allow (a control character other than tab, line feed and carriage
/// return, U+FFFE, U+FFFF).
pub fn assert_well_formed(path: &str, text: &str) {
    let text = &*own_part(path, text);
    let mut open: Vec<String> = Vec::new();
    let mut doctypes = 0;
    for token in Tokenizer::new(text).flatten() {
        match token {
            Token::Error(e) => panic!("{path}: parse error {e:?}"),
            Token::Doctype(d) => {
                doctypes += 1;
                assert_eq!(&d.name[..], b"html", "{path}");
            }
            Token::StartTag(tag) => {
                let name = String::from_utf8_lossy(&tag.name).into_owned();
                if !tag.self_closing && !VOID.contains(&name.as_str()) {
                    open.push(name);
                }
            }
            Token::EndTag(tag) => {
                let name = String::from_utf8_lossy(&tag.name).into_owned();
                assert_eq!(open.pop(), Some(name.clone()), "{path}: </{name}>");
            }
            Token::String(_) | Token::Comment(_) => {}
        }
    }
    assert!(open.is_empty(), "{path}: {open:?} not closed");
    let page = path.ends_with(".html");
    assert_eq!(doctypes, usize::from(page), "{path}: doctypes");
    if page {
        assert!(text.starts_with("<!DOCTYPE html>"), "{path}");
    }
    let forbidden: Vec<char> = text
        .chars()
        .filter(|&c| {
            (c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
                || matches!(c, '\u{fffe}' | '\u{ffff}')
        })
        .collect();
    assert!(forbidden.is_empty(), "{path}: {forbidden:?}");
}

/// The site's own elements: what the pages and figures are built of. Anything else in a
/// tokenized file came from the data.
const HTML_TAGS: &[&str] = &[
    "html",
    "head",
    "meta",
    "title",
    "link",
    "body",
    "nav",
    "a",
    "main",
    "h1",
    "h2",
    "h3",
    "p",
    "code",
    "span",
    "label",
    "select",
    "option",
    "div",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "figure",
    "img",
    "figcaption",
    "ul",
    "li",
    "script",
    "wbr",
    "section",
    "strong",
    "ol",
    "details",
    "summary",
    "dl",
    "dt",
    "dd",
];
const SVG_TAGS: &[&str] = &[
    "svg", "rect", "line", "polyline", "polygon", "circle", "text", "path", "g",
];

/// The elements of inferno's flame graphs (`flame/*.svg`) besides [`SVG_TAGS`]: its
/// background's gradient, its style sheet and its frames' tooltips; its script is checked
/// apart ([`own_part`]).
const INFERNO_TAGS: &[&str] = &["defs", "lineargradient", "stop", "style", "title"];

/// Whether the file at `path` is one of inferno's flame graphs.
fn is_flame_graph(path: &str) -> bool {
    path.starts_with("flame/") && path.ends_with(".svg")
}

/// The script element of a flame graph `svg`, from `<script` to `</script>`.
fn script_of(svg: &str) -> &str {
    let start = svg.find("<script").unwrap_or_else(|| panic!("no script"));
    let end = svg[start..]
        .find("</script>")
        .unwrap_or_else(|| panic!("no end of the script"))
        + start
        + "</script>".len();
    &svg[start..end]
}

/// The script that inferno writes into every flame graph that the site draws: the same code
/// and settings in all of them, whatever their stacks and titles.
fn inferno_script() -> &'static str {
    static SCRIPT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SCRIPT.get_or_init(|| {
        let stacks = vernier_model::FoldedStacks::from_folded("main;work 1\n").unwrap();
        let svg = vernier_plot::flame_graph(&stacks, "t", "samples", None).unwrap();
        script_of(&String::from_utf8(svg).unwrap()).to_string()
    })
}

/// What the site made of the file at `path`: all of it, but for a flame graph, inferno's SVG,
/// which is shown on pages as an image (no script runs in one) and runs its script (search
/// and zoom) only when opened on its own. There, the parts that are inferno's fixed text are
/// left out: its XML declaration and DOCTYPE (which the tokenizer of HTML does not read) and
/// its one script, after checking that the script is the one inferno writes into every flame
/// graph ([`inferno_script`]), so that nothing of the data reached it.
pub fn own_part<'a>(path: &str, text: &'a str) -> std::borrow::Cow<'a, str> {
    if !is_flame_graph(path) {
        return text.into();
    }
    assert_eq!(text.matches("<script").count(), 1, "{path}: one script");
    let script = script_of(text);
    assert_eq!(script, inferno_script(), "{path}: inferno's script");
    let start = text
        .find("<svg")
        .unwrap_or_else(|| panic!("{path}: no svg element"));
    text[start..].replacen(script, "", 1).into()
}

/// Panics unless `text` (a page or figure) holds only the site's own markup: known elements,
/// no event-handler attribute, scripts only the site's own file and images only its figures,
/// one `svg` element in a figure. A flame graph ([`own_part`]) may hold inferno's elements too,
/// the frames' `svg` element inside the figure's and its handler `onload="init(evt)"`, which
/// starts its script.
pub fn assert_only_own_markup(path: &str, text: &str) {
    let flame = is_flame_graph(path);
    let text = &*own_part(path, text);
    let allowed: Vec<&str> = if flame {
        SVG_TAGS.iter().chain(INFERNO_TAGS).copied().collect()
    } else if path.ends_with(".svg") {
        SVG_TAGS.to_vec()
    } else {
        HTML_TAGS.to_vec()
    };
    let tags = start_tags(text);
    assert!(!tags.is_empty(), "{path} has no markup");
    for (name, attributes) in &tags {
        assert!(
            allowed.contains(&name.as_str()),
            "{path}: element <{name}> {attributes:?}"
        );
        for (k, v) in attributes {
            let inferno_start = flame && name == "svg" && k == "onload" && v == "init(evt)";
            assert!(
                !k.starts_with("on") || inferno_start,
                "{path}: attribute {k}={v} on <{name}>"
            );
        }
        match name.as_str() {
            "script" => assert!(
                attributes
                    .get("src")
                    .is_some_and(|s| s.ends_with("vernier.js")),
                "{path}: {attributes:?}"
            ),
            "img" => assert!(
                attributes.get("src").is_some_and(|s| s.ends_with(".svg")),
                "{path}: {attributes:?}"
            ),
            _ => {}
        }
    }
    if path.ends_with(".svg") {
        assert_eq!(
            tags.iter().filter(|(n, _)| n == "svg").count(),
            1 + usize::from(flame),
            "{path}: one svg element (and inferno's frames)"
        );
    }
}

/// The text of a page or figure as a reader sees it: its text between tags with the character
/// references decoded, each piece on a line of its own, the script's and title's included.
pub fn text(page: &str) -> String {
    let mut out = String::new();
    for token in Tokenizer::new(page).flatten() {
        match token {
            Token::String(s) => out.push_str(&String::from_utf8_lossy(&s)),
            Token::StartTag(_) | Token::EndTag(_) => out.push('\n'),
            _ => {}
        }
    }
    out
}

/// The text of each element named `element` of `page`, with the tags inside it left out (a
/// `<wbr>` in a label, a link in a cell).
pub fn texts_of(page: &str, element: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut current = String::new();
    for token in Tokenizer::new(page).flatten() {
        match token {
            Token::StartTag(tag) if &tag.name[..] == element.as_bytes() => {
                depth += 1;
                current.clear();
            }
            Token::EndTag(tag) if &tag.name[..] == element.as_bytes() => {
                depth -= 1;
                out.push(current.clone());
            }
            Token::String(s) if depth > 0 => current.push_str(&String::from_utf8_lossy(&s)),
            _ => {}
        }
    }
    out
}

/// The values of attribute `name` on every element of `page` that has it.
pub fn attributes(page: &str, name: &str) -> Vec<String> {
    start_tags(page)
        .into_iter()
        .filter_map(|(_, mut a)| a.remove(name))
        .collect()
}

/// The links (`href`, `src`) of a page at `path`: each target's path in the site (resolved
/// against the page's directory, without its fragment; the page's own path for a fragment of
/// the page itself) and its fragment.
pub fn links(path: &str, page: &str) -> Vec<(String, Option<String>)> {
    let dir: Vec<&str> = path.split('/').collect();
    let dir = &dir[..dir.len() - 1];
    start_tags(page)
        .into_iter()
        .flat_map(|(_, a)| a.into_iter())
        .filter(|(k, _)| k == "href" || k == "src")
        .map(|(_, v)| {
            let (target, fragment) = match v.split_once('#') {
                Some((t, f)) => (t.to_string(), Some(f.to_string())),
                None => (v, None),
            };
            if target.is_empty() {
                return (path.to_string(), fragment);
            }
            let mut parts: Vec<&str> = dir.to_vec();
            for p in target.split('/') {
                match p {
                    ".." => {
                        parts.pop();
                    }
                    "." | "" => {}
                    p => parts.push(p),
                }
            }
            (parts.join("/"), fragment)
        })
        .collect()
}

/// Panics unless every link of every page leads to a file of `site` (the files `Site` lists)
/// and every fragment to an element of the target with that id, and unless no file refers to
/// anything outside the site.
pub fn assert_links_resolve(site: &BTreeMap<String, String>) {
    let ids: BTreeMap<&str, BTreeSet<String>> = site
        .iter()
        .filter(|(p, _)| p.ends_with(".html"))
        .map(|(p, text)| (p.as_str(), attributes(text, "id").into_iter().collect()))
        .collect();
    for (path, text) in site {
        // SVG names its XML namespaces by URI; they are names, not requests. In a flame graph
        // so is inferno's own namespace, its comment names its sources, and its background is a
        // gradient of the file itself.
        let rest = own_part(path, text)
            .replace("xmlns=\"http://www.w3.org/2000/svg\"", "")
            .replace("xmlns:xlink=\"http://www.w3.org/1999/xlink\"", "");
        let rest = if is_flame_graph(path) {
            let comment = rest.find("<!--Flame graph").map_or(0..0, |start| {
                start..start + rest[start..].find("-->").map_or(0, |e| e + 3)
            });
            let mut rest = rest.clone();
            rest.replace_range(comment, "");
            rest.replace("xmlns:fg=\"http://github.com/jonhoo/inferno\"", "")
                .replace("fill=\"url(#background)\"", "")
        } else {
            rest
        };
        for scheme in ["http://", "https://", "url(", "@import"] {
            assert!(!rest.contains(scheme), "{path} refers to {scheme}");
        }
        if !path.ends_with(".html") {
            continue;
        }
        for (_, attributes) in start_tags(text) {
            for (k, v) in attributes {
                if k == "href" || k == "src" {
                    assert!(!v.contains(':') && !v.starts_with("//"), "{path}: {k}={v}");
                }
            }
        }
        for (target, fragment) in links(path, text) {
            assert!(site.contains_key(&target), "{path} links to {target}");
            if let Some(fragment) = fragment {
                assert!(
                    ids.get(target.as_str())
                        .is_some_and(|i| i.contains(&fragment)),
                    "{path} links to {target}#{fragment}, no such element"
                );
            }
        }
    }
}

/// Every file of a site checked: pages and figures well-formed and of the site's own markup,
/// links resolved. Returns how many pages and figures there are.
pub fn assert_sound(site: &BTreeMap<String, String>) -> usize {
    let mut checked = 0;
    for (path, text) in site {
        if path.ends_with(".html") || path.ends_with(".svg") {
            assert_well_formed(path, text);
            assert_only_own_markup(path, text);
            checked += 1;
        }
    }
    assert_links_resolve(site);
    checked
}

/// Renders `site` directly: each of its paths on its own.
pub fn render_each(site: &Site) -> BTreeMap<String, String> {
    site.paths()
        .map(|p| {
            let bytes = site.render(p).unwrap().unwrap();
            (p.to_string(), String::from_utf8(bytes).unwrap())
        })
        .collect()
}
