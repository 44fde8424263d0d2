//! The documentation against the code: the crate README's command list
//! against clap's command line (both ways), every `oscova ...` line in the
//! READMEs and the plugin guide against the flags that exist, every
//! default a flag has named in the README, the README's TOML examples
//! loaded by the config parser (which refuses unknown keys), and the
//! defaults `--help` names against the functions that decide them.
//!
//! The command line comes from `Launcher::command`, the one `oscova`
//! parses, so a flag added, renamed or dropped fails here until the README
//! says so.

use std::collections::{BTreeMap, BTreeSet};

use oscova_cli::{Config, Launcher};

const CLI_README: &str = include_str!("../../README.md");
const MAIN_README: &str = include_str!("../../../README.md");
const GUIDE: &str = include_str!("../../../docs/plugin-guide.md");

/// Flags that apply to every subcommand.
const GLOBAL: [&str; 2] = ["json", "config"];

/// clap's own flags, documented by clap.
const BUILT_IN: [&str; 2] = ["help", "version"];

/// Every command path (`["tools", "call"]`) with its own flags: long name
/// to (aliases, possible values, default values).
type Flags = BTreeMap<String, (Vec<String>, Vec<String>, Vec<String>)>;

fn commands() -> BTreeMap<Vec<String>, Flags> {
    fn walk(cmd: &clap::Command, path: Vec<String>, out: &mut BTreeMap<Vec<String>, Flags>) {
        let mut flags = Flags::new();
        for arg in cmd.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            if arg.is_global_set() || BUILT_IN.contains(&long) {
                continue;
            }
            // Visible aliases, and the short flag as `-o`.
            let mut aliases: Vec<String> = arg
                .get_visible_aliases()
                .unwrap_or_default()
                .into_iter()
                .map(str::to_owned)
                .collect();
            aliases.extend(arg.get_short().map(|c| format!("-{c}")));
            // A switch's "values" (true, false) are never written.
            let values = if arg.get_action().takes_values() {
                arg.get_possible_values()
                    .iter()
                    .map(|v| v.get_name().to_owned())
                    .collect()
            } else {
                Vec::new()
            };
            let defaults = arg
                .get_default_values()
                .iter()
                .map(|v| v.to_string_lossy().into_owned())
                .collect();
            flags.insert(long.to_owned(), (aliases, values, defaults));
        }
        if !path.is_empty() {
            out.insert(path.clone(), flags);
        }
        for sub in cmd.get_subcommands() {
            if sub.get_name() == "help" {
                continue;
            }
            let mut next = path.clone();
            next.push(sub.get_name().to_owned());
            walk(sub, next, out);
        }
    }
    let mut out = BTreeMap::new();
    walk(&Launcher::new().command(), Vec::new(), &mut out);
    out
}

/// The fenced blocks of `markdown` whose info string starts with `lang`.
fn blocks(markdown: &str, lang: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match (&mut current, line.strip_prefix("```")) {
            (None, Some(info)) if info.starts_with(lang) => current = Some(String::new()),
            (Some(block), Some(_)) => {
                out.push(std::mem::take(block));
                current = None;
            }
            (Some(block), None) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    out
}

/// One `oscova ...` invocation as written: its subcommand path and its
/// flags (long ones without dashes) with the word after each.
struct Written {
    line: String,
    path: Vec<String>,
    flags: Vec<(String, Option<String>)>,
}

fn parse_invocation(text: &str, known: &BTreeMap<Vec<String>, Flags>) -> Option<Written> {
    let text = text.split(" # ").next().unwrap_or(text).trim();
    let mut words = text.split_whitespace().peekable();
    if words.next() != Some("oscova") {
        return None;
    }
    let mut path = Vec::new();
    let mut flags = Vec::new();
    while let Some(word) = words.next() {
        if let Some(long) = word.strip_prefix("--") {
            let long = long.trim_start_matches('[').trim_end_matches(']');
            let long = long.split('=').next().unwrap_or(long).to_owned();
            let value = words
                .peek()
                .filter(|w| !w.starts_with('-') && !w.starts_with('['))
                .map(|w| w.trim_end_matches(']').to_owned());
            flags.push((long, value));
        } else if word.len() == 2 && word.starts_with('-') && word != "--" {
            // A short flag, kept as `-o` and matched through its long one.
            let value = words
                .peek()
                .filter(|w| !w.starts_with('-') && !w.starts_with('['))
                .map(|w| w.trim_end_matches(']').to_owned());
            flags.push((word.to_owned(), value));
        } else if let Some(long) = word.strip_prefix("[--") {
            let long = long.trim_end_matches(']').to_owned();
            let value = words
                .peek()
                .filter(|w| !w.starts_with('-') && !w.starts_with('['))
                .map(|w| w.trim_end_matches(']').to_owned());
            flags.push((long, value));
        } else {
            // A flag's value never names a subcommand, so any word that
            // extends the path does.
            let mut next = path.clone();
            next.push(word.to_owned());
            if known.contains_key(&next) {
                path = next;
            }
        }
    }
    Some(Written {
        line: text.to_owned(),
        path,
        flags,
    })
}

/// The README's command list: one entry per `oscova` line, with its
/// continuation lines.
fn command_list(known: &BTreeMap<Vec<String>, Flags>) -> Vec<Written> {
    let section = CLI_README
        .split("## Commands")
        .nth(1)
        .expect("the README has a Commands section");
    let block = blocks(section, "text")
        .into_iter()
        .next()
        .expect("a text block");
    let mut joined: Vec<String> = Vec::new();
    for line in block.lines() {
        if line.starts_with("oscova ") {
            joined.push(line.to_owned());
        } else if let Some(last) = joined.last_mut() {
            last.push(' ');
            last.push_str(line.trim());
        }
    }
    joined
        .iter()
        // A flag named in a description ("with --listen") is not the
        // command's own list: keep the bracketed ones and the bare ones
        // before the description.
        .map(|l| {
            let cut = l.find("   ").map_or(l.as_str(), |i| &l[..i]);
            let rest = l.get(cut.len()..).unwrap_or("");
            let bracketed: Vec<&str> = rest
                .split_whitespace()
                .filter(|w| w.starts_with("[--"))
                .collect();
            format!("{cut} {}", bracketed.join(" "))
        })
        .filter_map(|l| parse_invocation(&l, known))
        .collect()
}

#[test]
fn the_readme_lists_every_command_and_flag() {
    let known = commands();
    let listed = command_list(&known);
    let listed_paths: BTreeSet<&Vec<String>> = listed.iter().map(|w| &w.path).collect();
    for (path, flags) in &known {
        // A command with subcommands and no flags of its own is only a group.
        let group = flags.is_empty()
            && known
                .keys()
                .any(|p| p.len() > path.len() && p.starts_with(path));
        if group {
            continue;
        }
        assert!(
            listed_paths.contains(path),
            "`oscova {}` is not in the README's command list",
            path.join(" ")
        );
    }
    for written in &listed {
        let own = &known[&written.path];
        let long = |flag: &str| -> String {
            own.iter()
                .find(|(_, (aliases, ..))| aliases.iter().any(|a| a == flag))
                .map_or_else(|| flag.to_owned(), |(long, _)| long.clone())
        };
        let documented: BTreeSet<String> = written.flags.iter().map(|(f, _)| long(f)).collect();
        let documented: BTreeSet<&str> = documented.iter().map(String::as_str).collect();
        let actual: BTreeSet<&str> = own.keys().map(String::as_str).collect();
        assert_eq!(
            documented, actual,
            "the README's line `{}` and the command's flags differ",
            written.line
        );
        for (flag, value) in &written.flags {
            let values = &own[&long(flag)].1;
            if values.is_empty() {
                continue;
            }
            let listed: BTreeSet<&str> = value.as_deref().unwrap_or("").split('|').collect();
            let actual: BTreeSet<&str> = values.iter().map(String::as_str).collect();
            assert_eq!(
                listed, actual,
                "`--{flag}` in `{}` lists other values",
                written.line
            );
        }
    }
    for global in GLOBAL {
        assert!(
            CLI_README.contains(&format!("`--{global}")),
            "`--{global}` is not documented"
        );
    }
}

#[test]
fn every_oscova_line_in_the_docs_uses_flags_that_exist() {
    let known = commands();
    let mut checked = 0;
    for (doc, text) in [
        ("oscova-cli/README.md", CLI_README),
        ("README.md", MAIN_README),
        ("docs/plugin-guide.md", GUIDE),
    ] {
        for block in blocks(text, "sh").into_iter().chain(blocks(text, "text")) {
            for line in block.lines() {
                for part in line.split(" | ") {
                    // The guide's own binary is the same command line.
                    let part = part
                        .trim()
                        .replace("target/release/acme-weather ", "oscova ");
                    let Some(written) = parse_invocation(&part, &known) else {
                        continue;
                    };
                    assert!(
                        !written.path.is_empty(),
                        "{doc}: `{}` names no command",
                        written.line
                    );
                    let own = &known[&written.path];
                    for (flag, _) in &written.flags {
                        let exists = GLOBAL.contains(&flag.as_str())
                            || own.contains_key(flag)
                            || own.values().any(|(aliases, ..)| aliases.contains(flag));
                        assert!(
                            exists,
                            "{doc}: `--{flag}` in `{}` is not a flag of `oscova {}`",
                            written.line,
                            written.path.join(" ")
                        );
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 20, "only {checked} lines were checked");
}

#[test]
fn every_default_is_named_in_the_readme() {
    let paragraphs: Vec<String> = CLI_README
        .split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    let mut seen = 0;
    for flags in commands().values() {
        for (flag, (_, _, defaults)) in flags {
            let Some(default) = defaults.first() else {
                continue;
            };
            let named = paragraphs.iter().any(|p| {
                p.contains(&format!("`--{flag}"))
                    && [
                        format!("default `{default}`"),
                        format!("default {default})"),
                        format!("defaults to `{default}`"),
                    ]
                    .iter()
                    .any(|form| p.contains(form.as_str()))
            });
            assert!(
                named,
                "the README does not say that `--{flag}` defaults to `{default}`"
            );
            seen += 1;
        }
    }
    assert!(seen >= 4, "only {seen} defaults");
}

#[test]
fn the_readmes_toml_examples_are_valid_configs() {
    let none: [(&str, &str); 0] = [];
    let mut loaded = 0;
    for (doc, text) in [
        ("oscova-cli/README.md", CLI_README),
        ("README.md", MAIN_README),
    ] {
        for block in blocks(text, "toml") {
            // Cargo manifests are not configs.
            if block.contains("dependencies]")
                || block.contains("[package]")
                || block.contains("[features]")
            {
                continue;
            }
            if let Err(e) = Config::from_toml_str(&block, none) {
                panic!("{doc}: this example is not a valid config ({e}):\n{block}");
            }
            loaded += 1;
        }
    }
    assert!(loaded >= 3, "only {loaded} examples");
}

#[test]
fn help_names_the_default_recognizer() {
    let command = Launcher::new().command();
    let hear = command
        .find_subcommand("speech")
        .and_then(|s| s.find_subcommand("hear"))
        .expect("speech hear");
    let about = hear
        .get_about()
        .map(ToString::to_string)
        .unwrap_or_default();
    // Both possible defaults are named, and the one in force is one of them.
    assert!(
        about.contains("whisper") && about.contains("pocketsphinx"),
        "{about}"
    );
    assert!(about.contains(oscova_cli::default_recognizer()), "{about}");
    assert!(CLI_README.contains("whisper when this build has it"));
}
