//! Golden snapshots: the exports of the main fixtures, compared with the
//! files under `tests/golden/profiles/`.

use std::path::PathBuf;

use super::*;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("golden")
        .join("profiles")
}

/// Compares exports with `tests/golden/<fixture>.<profile>.json`;
/// `UPDATE_GOLDEN=1` rewrites them.
#[test]
fn golden_snapshots() {
    let update = std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1");
    let all = fixtures();
    let wanted: [(&str, &[SchemaProfile]); 4] = [
        ("flat", &SchemaProfile::ALL),
        ("nested", &SchemaProfile::ALL),
        ("choices", &SchemaProfile::ALL),
        (
            "map",
            &[
                SchemaProfile::Raw,
                SchemaProfile::Gemini,
                SchemaProfile::Anthropic,
            ],
        ),
    ];
    if update {
        std::fs::create_dir_all(golden_dir()).expect("create golden dir");
    }
    let mut stale = Vec::new();
    for (name, profiles) in wanted {
        let fixture = &all
            .iter()
            .find(|(n, _)| *n == name)
            .expect("fixture exists")
            .1;
        for &p in profiles {
            let out = export_ok(fixture, p);
            let file = golden_dir().join(format!("{name}.{p}.json"));
            let text = format!(
                "{}\n",
                serde_json::to_string_pretty(&out).expect("serializes")
            );
            if update {
                std::fs::write(&file, text).expect("write golden file");
                continue;
            }
            let expected = std::fs::read_to_string(&file)
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok());
            if expected.as_ref() != Some(&out) {
                stale.push(format!("{}:\n{text}", file.display()));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "golden files differ (rerun with UPDATE_GOLDEN=1 to rewrite):\n{}",
        stale.join("\n")
    );
}
