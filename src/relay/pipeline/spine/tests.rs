//! The spine is the only caller of the phases it wires, and the adaptors the only code that
//! names a transport, and no relay file is over 600 lines: source checks over `src/`.

use std::path::Path;

/// Every `.rs` file under `dir`, with its path.
fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        panic!("reading {}", dir.display());
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            out.push((path.display().to_string(), text));
        }
    }
}

/// The code of a file without its comments' lines (doc links name the phases freely).
fn code(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `code` uses `item` of `module`: a path `module::item` or an import of it in a
/// `use` list (`module::{…, item, …}`).
fn uses(code: &str, module: &str, item: &str) -> bool {
    let flat: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    if flat.contains(&format!("{module}::{item}(")) || flat.contains(&format!("{module}::{item};"))
    {
        return true;
    }
    let open = format!("{module}::{{");
    flat.match_indices(&open).any(|(at, _)| {
        let list = &flat[at + open.len()..];
        let list = &list[..list.find('}').unwrap_or(list.len())];
        list.split(',')
            .any(|name| name == item || name.starts_with(&format!("{item}as")))
    })
}

#[test]
fn only_the_spine_admits_detaches_forwards_and_meters() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    assert!(files.len() > 50, "the source tree was found");
    let phases = [
        ("admission", "admit"),
        ("detach", "run"),
        ("attempt", "forward"),
        ("Meter", "new"),
    ];
    let mut offenders = Vec::new();
    for (path, text) in &files {
        if path.ends_with("relay/pipeline/spine.rs") || path.contains("relay/pipeline/spine/") {
            continue;
        }
        let code = code(text);
        for (module, item) in phases {
            if uses(&code, module, item) {
                offenders.push(format!("{path}: {module}::{item}"));
            }
        }
    }
    assert!(offenders.is_empty(), "outside the spine: {offenders:#?}");
}

#[test]
fn only_the_adaptors_name_transports() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    assert!(files.len() > 50, "the source tree was found");
    let lookups = [("Transport", "of"), ("adaptor", "of")];
    let mut offenders = Vec::new();
    for (path, text) in &files {
        // This file names them in the matcher's own test.
        if path.contains("relay/adaptor/") || path.ends_with("relay/pipeline/spine/tests.rs") {
            continue;
        }
        let code = code(text);
        for (module, item) in lookups {
            if uses(&code, module, item) {
                offenders.push(format!("{path}: {module}::{item}"));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "transport branches outside relay/adaptor/ (make them adaptor methods): {offenders:#?}"
    );
}

#[test]
fn the_check_sees_imports_and_paths() {
    assert!(uses(
        "use super::attempt::{Build, forward};",
        "attempt",
        "forward"
    ));
    assert!(uses("let m = Meter::new(ctx, hold, p);", "Meter", "new"));
    assert!(uses("super::detach::run(&state, f)", "detach", "run"));
    assert!(uses(
        "use super::admission::{self,\n admit};",
        "admission",
        "admit"
    ));
    assert!(!uses(
        "use super::attempt::{Build, Pending};",
        "attempt",
        "forward"
    ));
    assert!(!uses("admission::admit_output", "admission", "admit"));
    assert!(uses(
        "if Transport::of(c.channel_type) == Transport::Bedrock",
        "Transport",
        "of"
    ));
    assert!(!uses("adaptor::openai_url(c, p, m)", "adaptor", "of"));
}

/// Issue P19's size rule: no file of the relay is over 600 lines (split it by concept).
#[test]
fn no_relay_file_is_over_600_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/relay");
    let mut files = Vec::new();
    sources(&root, &mut files);
    assert!(files.len() > 50, "the relay's tree was found");
    let long: Vec<(String, usize)> = files
        .iter()
        .map(|(path, text)| (path.clone(), text.lines().count()))
        .filter(|(_, lines)| *lines > 600)
        .collect();
    assert!(long.is_empty(), "over 600 lines: {long:?}");
}
