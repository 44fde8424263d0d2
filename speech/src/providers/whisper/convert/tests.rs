//! Tests of the converter on a small model written the way CTranslate2
//! writes one, read back with a ggml reader of the tests' own.

use super::*;
use crate::providers::whisper::ct2::tests::write_model;
use crate::providers::whisper::half::f32_to_f16;

const S: usize = 4;

/// Halves 0, 1, 2, ... as little-endian f16 bytes; a fused matrix's part
/// `i` then starts at value `i * rows * cols`.
fn counting(n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| f32_to_f16(i as f32).to_le_bytes())
        .collect()
}

/// A fused bias with zeros in the key part `key`.
fn bias(parts: usize, key: usize) -> Vec<u8> {
    (0..parts * S)
        .map(|i| if i / S == key { 0.0 } else { 1.0 + i as f32 })
        .flat_map(|v| f32_to_f16(v).to_le_bytes())
        .collect()
}

type Var = (String, Vec<u32>, u8, Vec<u8>);

fn var(name: impl Into<String>, dims: &[usize], data: Vec<u8>) -> Var {
    (
        name.into(),
        dims.iter().map(|d| *d as u32).collect(),
        4,
        data,
    )
}

fn linear(vars: &mut Vec<Var>, scope: &str, out: usize, inp: usize) {
    vars.push(var(
        format!("{scope}/weight"),
        &[out, inp],
        counting(out * inp),
    ));
    vars.push(var(format!("{scope}/bias"), &[out], counting(out)));
}

fn norm(vars: &mut Vec<Var>, scope: &str) {
    vars.push(var(format!("{scope}/gamma"), &[S], counting(S)));
    vars.push(var(format!("{scope}/beta"), &[S], counting(S)));
}

/// A one-layer Whisper of width 4 with 2 mel bands and a 6-token
/// vocabulary (3 ordinary tokens).
fn tiny_model(edit: impl FnOnce(&mut Vec<Var>)) -> Vec<u8> {
    let mut v = vec![
        var("encoder/conv1/weight", &[S, 2, 3], counting(S * 2 * 3)),
        var("encoder/conv1/bias", &[S], counting(S)),
        var("encoder/conv2/weight", &[S, S, 3], counting(S * S * 3)),
        var("encoder/conv2/bias", &[S], counting(S)),
        var(
            "encoder/position_encodings/encodings",
            &[5, S],
            counting(5 * S),
        ),
        var("decoder/embeddings/weight", &[6, S], counting(6 * S)),
        var(
            "decoder/position_encodings/encodings",
            &[3, S],
            counting(3 * S),
        ),
        (
            "encoder/num_heads".into(),
            vec![],
            2,
            2i16.to_le_bytes().to_vec(),
        ),
        (
            "decoder/num_heads".into(),
            vec![],
            2,
            2i16.to_le_bytes().to_vec(),
        ),
    ];
    for side in ["encoder", "decoder"] {
        let l = format!("{side}/layer_0");
        v.push(var(
            format!("{l}/self_attention/linear_0/weight"),
            &[3 * S, S],
            counting(3 * S * S),
        ));
        v.push(var(
            format!("{l}/self_attention/linear_0/bias"),
            &[3 * S],
            bias(3, 1),
        ));
        linear(&mut v, &format!("{l}/self_attention/linear_1"), S, S);
        norm(&mut v, &format!("{l}/self_attention/layer_norm"));
        linear(&mut v, &format!("{l}/ffn/linear_0"), 4 * S, S);
        linear(&mut v, &format!("{l}/ffn/linear_1"), S, 4 * S);
        norm(&mut v, &format!("{l}/ffn/layer_norm"));
        norm(&mut v, &format!("{side}/layer_norm"));
    }
    let l = "decoder/layer_0/attention";
    linear(&mut v, &format!("{l}/linear_0"), S, S);
    v.push(var(
        format!("{l}/linear_1/weight"),
        &[2 * S, S],
        counting(2 * S * S),
    ));
    v.push(var(format!("{l}/linear_1/bias"), &[2 * S], bias(2, 0)));
    linear(&mut v, &format!("{l}/linear_2"), S, S);
    norm(&mut v, &format!("{l}/layer_norm"));
    edit(&mut v);
    v.sort_by(|a, b| a.0.cmp(&b.0));
    let vars: Vec<(&str, &[u32], u8, Vec<u8>)> = v
        .iter()
        .map(|(n, d, t, b)| (n.as_str(), d.as_slice(), *t, b.clone()))
        .collect();
    write_model(
        "WhisperSpec",
        &vars,
        &[("decoder/projection/weight", "decoder/embeddings/weight")],
    )
}

const VOCAB: &str = "a\nĠb\nc\n<|endoftext|>\n<|startoftranscript|>\n<|notimestamps|>\n";

/// A ggml tensor as read back: type, dimensions, data.
#[derive(Debug)]
struct GgmlTensor {
    ftype: i32,
    ne: Vec<i32>,
    data: Vec<u8>,
}

struct Cursor<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Vec<u8> {
        let s = self.bytes[self.at..self.at + n].to_vec();
        self.at += n;
        s
    }

    fn int(&mut self) -> i32 {
        i32::from_le_bytes(self.take(4).try_into().unwrap())
    }
}

type Ggml = (Vec<i32>, Vec<f32>, Vec<Vec<u8>>, Vec<(String, GgmlTensor)>);

/// Reads a whisper.cpp model file the way `whisper_model_load` does.
fn read_ggml(bytes: &[u8]) -> Ggml {
    let mut c = Cursor { bytes, at: 0 };
    assert_eq!(c.int() as u32, GGML_MAGIC);
    let hp: Vec<i32> = (0..11).map(|_| c.int()).collect();
    let (n_mel, n_fft) = (c.int(), c.int());
    let filters = f32s(&c.take((n_mel * n_fft) as usize * 4));
    let n_tokens = c.int();
    let tokens: Vec<Vec<u8>> = (0..n_tokens)
        .map(|_| {
            let len = c.int() as usize;
            c.take(len)
        })
        .collect();
    let mut tensors = Vec::new();
    while c.at < bytes.len() {
        let (n_dims, len, ftype) = (c.int(), c.int(), c.int());
        let ne: Vec<i32> = (0..n_dims).map(|_| c.int()).collect();
        let name = String::from_utf8(c.take(len as usize)).unwrap();
        let count: i32 = ne.iter().product();
        let data = c.take(count as usize * if ftype == 1 { 2 } else { 4 });
        tensors.push((name, GgmlTensor { ftype, ne, data }));
    }
    (hp, filters, tokens, tensors)
}

fn tensor<'t>(tensors: &'t [(String, GgmlTensor)], name: &str) -> &'t GgmlTensor {
    &tensors
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("{name}"))
        .1
}

fn f16s(data: &[u8]) -> Vec<f32> {
    data.chunks_exact(2)
        .map(|c| crate::providers::whisper::half::f16_to_f32(u16::from_le_bytes([c[0], c[1]])))
        .collect()
}

fn f32s(data: &[u8]) -> Vec<f32> {
    data.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn hyper_parameters_filters_and_vocabulary_are_written() {
    let (hp, bytes) = convert(&tiny_model(|_| {}), VOCAB, Quant::F16).unwrap();
    assert_eq!(hp.n_audio_layer, 1);
    assert!(!hp.is_multilingual());
    assert!(is_ggml(&bytes));
    let (params, filters, tokens, tensors) = read_ggml(&bytes);
    assert_eq!(params, [6, 5, 4, 2, 1, 3, 4, 2, 1, 2, 1]);
    assert_eq!(filters, mel::filters(2));
    assert_eq!(tokens, [b"a".to_vec(), b" b".to_vec(), b"c".to_vec()]);
    // As whisper.cpp counts them: 7 encoder-wide, 15 per encoder layer, 4
    // decoder-wide, 24 per decoder layer; all names distinct.
    assert_eq!(tensors.len(), 7 + 15 + 4 + 24);
    let mut names: Vec<&str> = tensors.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), tensors.len());
    assert!(names.iter().all(|n| !n.contains("key.bias")));
}

#[test]
fn fused_projections_are_split_by_rows() {
    let (_, bytes) = convert(&tiny_model(|_| {}), VOCAB, Quant::F16).unwrap();
    let (_, _, _, tensors) = read_ggml(&bytes);
    for (i, part) in ["query", "key", "value"].iter().enumerate() {
        let t = tensor(&tensors, &format!("encoder.blocks.0.attn.{part}.weight"));
        assert_eq!((t.ftype, t.ne.as_slice()), (1, [4, 4].as_slice()));
        let first = (i * S * S) as f32;
        assert_eq!(
            f16s(&t.data),
            (0..S * S).map(|k| first + k as f32).collect::<Vec<_>>()
        );
    }
    let q = tensor(&tensors, "decoder.blocks.0.attn.query.bias");
    assert_eq!((q.ftype, f32s(&q.data)), (0, vec![1.0, 2.0, 3.0, 4.0]));
    let v = tensor(&tensors, "decoder.blocks.0.attn.value.bias");
    assert_eq!(f32s(&v.data), [9.0, 10.0, 11.0, 12.0]);
    let ck = tensor(&tensors, "decoder.blocks.0.cross_attn.key.weight");
    assert_eq!(f16s(&ck.data)[0], 0.0);
    let cv = tensor(&tensors, "decoder.blocks.0.cross_attn.value.weight");
    assert_eq!(f16s(&cv.data)[0], (S * S) as f32);
    let cvb = tensor(&tensors, "decoder.blocks.0.cross_attn.value.bias");
    assert_eq!(f32s(&cvb.data), [5.0, 6.0, 7.0, 8.0]);
}

#[test]
fn types_and_shapes_are_the_ones_whisper_cpp_allocates() {
    let (_, bytes) = convert(&tiny_model(|_| {}), VOCAB, Quant::F16).unwrap();
    let (_, _, _, tensors) = read_ggml(&bytes);
    for (name, ftype, ne) in [
        ("encoder.conv1.weight", 1, vec![3, 2, 4]),
        ("encoder.conv1.bias", 0, vec![1, 4]),
        ("encoder.conv2.weight", 1, vec![3, 4, 4]),
        ("encoder.positional_embedding", 0, vec![4, 5]),
        ("encoder.blocks.0.mlp.0.weight", 1, vec![4, 16]),
        ("encoder.blocks.0.mlp.2.weight", 1, vec![16, 4]),
        ("encoder.blocks.0.mlp_ln.weight", 0, vec![4]),
        ("encoder.ln_post.bias", 0, vec![4]),
        ("decoder.positional_embedding", 0, vec![4, 3]),
        ("decoder.token_embedding.weight", 1, vec![4, 6]),
        ("decoder.blocks.0.cross_attn_ln.weight", 0, vec![4]),
        ("decoder.ln.weight", 0, vec![4]),
    ] {
        let t = tensor(&tensors, name);
        assert_eq!((t.ftype, &t.ne), (ftype, &ne), "{name}");
    }
    // f16 → f32 keeps values: the positional embedding counts up.
    let pe = tensor(&tensors, "decoder.positional_embedding");
    assert_eq!(
        f32s(&pe.data),
        (0..12).map(|k| k as f32).collect::<Vec<_>>()
    );
}

#[test]
fn a_non_zero_key_bias_is_refused() {
    let model = tiny_model(|v| {
        let bias = v
            .iter_mut()
            .find(|(n, ..)| n == "decoder/layer_0/attention/linear_1/bias")
            .unwrap();
        bias.3[0..2].copy_from_slice(&f32_to_f16(0.5).to_le_bytes());
    });
    assert_eq!(
        convert(&model, VOCAB, Quant::F16).unwrap_err(),
        ConvertError::KeyBias("decoder/layer_0/attention/linear_1/bias".into())
    );
}

#[test]
fn wrong_models_are_refused_with_the_reason() {
    let missing = tiny_model(|v| v.retain(|(n, ..)| n != "decoder/layer_norm/gamma"));
    assert_eq!(
        convert(&missing, VOCAB, Quant::F16).unwrap_err(),
        ConvertError::Missing("decoder/layer_norm/gamma".into())
    );
    let quantized = tiny_model(|v| {
        let w = v
            .iter_mut()
            .find(|(n, ..)| n == "encoder/layer_0/ffn/linear_0/weight")
            .unwrap();
        w.2 = 1;
        w.3.truncate(w.3.len() / 2);
    });
    assert!(matches!(
        convert(&quantized, VOCAB, Quant::F16).unwrap_err(),
        ConvertError::Type { dtype: "int8", .. }
    ));
    let shaped = tiny_model(|v| {
        let w = v
            .iter_mut()
            .find(|(n, ..)| n == "encoder/conv2/bias")
            .unwrap();
        w.1 = vec![2, 2];
    });
    assert!(matches!(
        convert(&shaped, VOCAB, Quant::F16).unwrap_err(),
        ConvertError::Shape { .. }
    ));
    assert!(matches!(
        convert(&tiny_model(|_| {}), "a\n<|endoftext|>\n", Quant::F16).unwrap_err(),
        ConvertError::VocabularySize {
            actual: 2,
            expected: 6
        }
    ));
    let other = write_model("TransformerSpec", &[], &[]);
    assert_eq!(
        convert(&other, VOCAB, Quant::F16).unwrap_err(),
        ConvertError::NotWhisper("TransformerSpec".into())
    );
    assert!(!is_ggml(b"lmg"));
}

#[test]
fn quantized_matrices_must_be_whole_blocks_long() {
    // The test model's rows are 4 values long: no block fits.
    for quant in [Quant::Q8_0, Quant::Q5_0] {
        assert_eq!(
            convert(&tiny_model(|_| {}), VOCAB, quant).unwrap_err(),
            ConvertError::Blocks {
                name: "encoder.blocks.0.attn.query.weight".into(),
                len: S,
                quant: quant.name(),
            }
        );
    }
}
