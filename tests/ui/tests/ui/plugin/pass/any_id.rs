//! Any plugin id is accepted and normalised like every other wire-name
//! segment; the manifest keeps it as written.

use oscova_core::prelude::*;

pub struct SpeakToolset;

#[toolset]
impl SpeakToolset {
    /// Says something.
    pub fn say() {}
}

/// Written the way Oscova manifests write ids.
#[plugin(id = "Oscova.LocalSpeech")]
pub struct LocalSpeech;

/// Capitals and a dash.
#[plugin(id = "Ceo.Probe-Tools")]
pub struct ProbeTools;

/// A space, and `__`, which is the segment separator: normalised too.
#[plugin(id = "Acme Search__Archive")]
pub struct Archive;

/// A leading digit.
#[plugin(id = "9lives")]
pub struct Lives;

macro_rules! speak {
    ($($plugin:ident),*) => {$(
        impl AgentPlugin for $plugin {
            fn configure(&self, b: &mut AgentPluginBuilder) {
                b.add_toolset(|_: &AgentPluginContext| SpeakToolset);
            }
        }
    )*};
}
speak!(LocalSpeech, ProbeTools, Archive, Lives);

fn main() {
    let ids: Vec<_> = oscova_core::linked_plugins![LocalSpeech, ProbeTools, Archive, Lives]
        .iter()
        .map(|r| r.manifest().id)
        .collect();
    assert_eq!(
        ids,
        ["Oscova.LocalSpeech", "Ceo.Probe-Tools", "Acme Search__Archive", "9lives"]
    );

    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![LocalSpeech, ProbeTools, Archive, Lives])
        .build()
        .unwrap();
    assert!(host.diagnostics().is_empty(), "{:?}", host.diagnostics());
    let names: Vec<_> = host.tools().iter().map(|t| t.wire_name()).collect();
    assert_eq!(
        names,
        [
            "oscova_local_speech__speak__say",
            "ceo_probe_tools__speak__say",
            "acme_search_archive__speak__say",
            "9lives__speak__say",
        ]
    );
    assert_eq!(host.tools()[0].plugin_id(), "Oscova.LocalSpeech");
}
