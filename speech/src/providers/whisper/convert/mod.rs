//! CTranslate2 Whisper model → whisper.cpp's ggml model file, in memory.
//!
//! Rules: the output is the layout whisper.cpp's `whisper_model_load` reads
//! and OpenAI-to-ggml converters (`models/convert-pt-to-ggml.py`) write: the
//! magic `ggml`, eleven `i32` hyper-parameters, the mel filter bank
//! ([`mel::filters`]), the ordinary tokens ([`vocab::parse`]), then tensors
//! as (`i32` rank, `i32` name length, `i32` type: 0 f32, 1 f16; `i32`
//! dimensions innermost first; name; data). The weight matrices (token
//! embedding included) take the [`Quant`] asked for (f16, `ftype` 1, or a
//! block quantization, whose `ftype` the header carries), convolution
//! kernels are f16, everything one-dimensional plus the positional
//! embeddings f32: the types whisper.cpp allocates them with; its loader
//! copies bytes without conversion, so they must match. A quantized
//! matrix's rows must be whole blocks long, or the conversion is refused. The
//! fused projections CTranslate2 stores are split by rows: self-attention
//! `linear_0` into query, key and value, cross-attention `linear_1` into
//! key and value. whisper.cpp has no key biases; CTranslate2 stores zeros
//! in their place, and anything else is refused (it would mean the model
//! was not converted from Whisper, or is read wrongly). Every shape is
//! checked against the hyper-parameters before a byte is written.

use super::ct2::{Ct2Model, DType, Variable};
use super::half::{f16_to_f32, f32_to_f16};
use super::quant::Quant;
use super::{mel, vocab};

/// `ggml` as whisper.cpp's loader reads it (a little-endian `u32`).
const GGML_MAGIC: u32 = 0x6767_6d6c;

/// Why a model could not be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ConvertError {
    #[error("model.bin: {0}")]
    Parse(#[from] super::ct2::Ct2Error),
    #[error("{0}")]
    Vocabulary(#[from] vocab::VocabError),
    #[error("model.bin holds a `{0}`, not a Whisper model (`WhisperSpec`)")]
    NotWhisper(String),
    #[error("model.bin has no variable `{0}`")]
    Missing(String),
    #[error("`{name}` has shape {actual:?}, expected {expected:?}")]
    Shape {
        name: String,
        actual: Vec<usize>,
        expected: Vec<usize>,
    },
    #[error(
        "`{name}` is stored as {dtype}; only float16 and float32 models can be converted \
         (re-convert the model with `--quantization float16`)"
    )]
    Type { name: String, dtype: &'static str },
    #[error("`{name}` has rows of {len} values, not whole blocks of 32 for {quant}")]
    Blocks {
        name: String,
        len: usize,
        quant: &'static str,
    },
    #[error("`{name}` should be a scalar integer")]
    Scalar { name: String },
    #[error("the key bias in `{0}` is not zero, which whisper.cpp cannot represent")]
    KeyBias(String),
    #[error(
        "vocabulary.txt has {actual} lines but the model {expected} tokens; the two files do not belong together"
    )]
    VocabularySize { actual: usize, expected: usize },
}

/// Whisper's hyper-parameters, in whisper.cpp's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HParams {
    pub(crate) n_vocab: usize,
    pub(crate) n_audio_ctx: usize,
    pub(crate) n_audio_state: usize,
    pub(crate) n_audio_head: usize,
    pub(crate) n_audio_layer: usize,
    pub(crate) n_text_ctx: usize,
    pub(crate) n_text_state: usize,
    pub(crate) n_text_head: usize,
    pub(crate) n_text_layer: usize,
    pub(crate) n_mels: usize,
}

impl HParams {
    /// Whether the model is multilingual (whisper.cpp's own test).
    pub(crate) fn is_multilingual(&self) -> bool {
        self.n_vocab >= 51_865
    }
}

/// The element type of an output tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Out {
    F32,
    F16,
    /// A weight matrix: the conversion's [`Quant`].
    Weight,
}

/// One tensor to write: which rows of which variable, under what name and
/// ggml shape (innermost dimension first).
struct Tensor<'m, 'a> {
    name: String,
    source: &'m Variable<'a>,
    rows: std::ops::Range<usize>,
    ne: Vec<usize>,
    out: Out,
}

/// The converter's working state: the model and the tensors planned so far.
struct Plan<'m, 'a> {
    model: &'m Ct2Model<'a>,
    tensors: Vec<Tensor<'m, 'a>>,
}

impl<'m, 'a> Plan<'m, 'a> {
    fn var(&self, name: &str) -> Result<&'m Variable<'a>, ConvertError> {
        let var = self
            .model
            .get(name)
            .ok_or_else(|| ConvertError::Missing(name.to_owned()))?;
        if !matches!(var.dtype, DType::F16 | DType::F32) {
            return Err(ConvertError::Type {
                name: name.to_owned(),
                dtype: var.dtype.name(),
            });
        }
        Ok(var)
    }

    fn shaped(&self, name: &str, expected: &[usize]) -> Result<&'m Variable<'a>, ConvertError> {
        let var = self.var(name)?;
        let actual = var.dims();
        if actual != expected {
            return Err(ConvertError::Shape {
                name: name.to_owned(),
                actual,
                expected: expected.to_vec(),
            });
        }
        Ok(var)
    }

    /// `rows` of a checked `[rows, ..rest]` variable as tensor `name`.
    fn push(
        &mut self,
        name: String,
        source: &'m Variable<'a>,
        rows: std::ops::Range<usize>,
        ne: Vec<usize>,
        out: Out,
    ) {
        self.tensors.push(Tensor {
            name,
            source,
            rows,
            ne,
            out,
        });
    }

    /// A whole `[n]` vector (biases, layer norms), as f32.
    fn vector(&mut self, from: &str, to: String, n: usize) -> Result<(), ConvertError> {
        let var = self.shaped(from, &[n])?;
        self.push(to, var, 0..n, vec![n], Out::F32);
        Ok(())
    }

    /// A linear layer `[out, inp]` with bias: `.weight` f16 and `.bias` f32.
    fn linear(&mut self, from: &str, to: &str, out: usize, inp: usize) -> Result<(), ConvertError> {
        let weight = self.shaped(&format!("{from}/weight"), &[out, inp])?;
        self.push(
            format!("{to}.weight"),
            weight,
            0..out,
            vec![inp, out],
            Out::Weight,
        );
        self.vector(&format!("{from}/bias"), format!("{to}.bias"), out)
    }

    fn layer_norm(&mut self, from: &str, to: &str, n: usize) -> Result<(), ConvertError> {
        self.vector(&format!("{from}/gamma"), format!("{to}.weight"), n)?;
        self.vector(&format!("{from}/beta"), format!("{to}.bias"), n)
    }

    /// A fused projection of `parts.len()` stacked `[n, n]` matrices: each
    /// part its own tensor; the part named `key` has no bias in whisper.cpp
    /// and must have a zero one here.
    fn fused(
        &mut self,
        from: &str,
        to: &str,
        parts: &[&str],
        n: usize,
    ) -> Result<(), ConvertError> {
        let total = parts.len() * n;
        let weight = self.shaped(&format!("{from}/weight"), &[total, n])?;
        let bias_name = format!("{from}/bias");
        let bias = self.shaped(&bias_name, &[total])?;
        for (i, part) in parts.iter().enumerate() {
            let rows = i * n..(i + 1) * n;
            self.push(
                format!("{to}.{part}.weight"),
                weight,
                rows.clone(),
                vec![n, n],
                Out::Weight,
            );
            if *part == "key" {
                if !is_zero(bias, rows) {
                    return Err(ConvertError::KeyBias(bias_name));
                }
            } else {
                self.push(format!("{to}.{part}.bias"), bias, rows, vec![n], Out::F32);
            }
        }
        Ok(())
    }
}

/// Whether elements `range` of a float vector are all zero (either sign).
fn is_zero(var: &Variable<'_>, range: std::ops::Range<usize>) -> bool {
    let size = var.dtype.size();
    var.data[range.start * size..range.end * size]
        .chunks_exact(size)
        .all(|e| match size {
            2 => u16::from_le_bytes([e[0], e[1]]) & 0x7fff == 0,
            _ => u32::from_le_bytes([e[0], e[1], e[2], e[3]]) & 0x7fff_ffff == 0,
        })
}

fn scalar(model: &Ct2Model<'_>, name: &str) -> Result<usize, ConvertError> {
    model
        .get(name)
        .and_then(Variable::scalar_int)
        .and_then(|v| usize::try_from(v).ok())
        .filter(|v| *v > 0)
        .ok_or_else(|| ConvertError::Scalar {
            name: name.to_owned(),
        })
}

fn dims(model: &Ct2Model<'_>, name: &str, rank: usize) -> Result<Vec<usize>, ConvertError> {
    let var = model
        .get(name)
        .ok_or_else(|| ConvertError::Missing(name.to_owned()))?;
    let dims = var.dims();
    if dims.len() != rank {
        return Err(ConvertError::Shape {
            name: name.to_owned(),
            actual: dims,
            expected: vec![0; rank],
        });
    }
    Ok(dims)
}

/// Reads the hyper-parameters from the variables' shapes.
pub(crate) fn hparams(model: &Ct2Model<'_>) -> Result<HParams, ConvertError> {
    if model.spec != "WhisperSpec" {
        return Err(ConvertError::NotWhisper(model.spec.clone()));
    }
    let embeddings = dims(model, "decoder/embeddings/weight", 2)?;
    let audio_pe = dims(model, "encoder/position_encodings/encodings", 2)?;
    let text_pe = dims(model, "decoder/position_encodings/encodings", 2)?;
    let conv1 = dims(model, "encoder/conv1/weight", 3)?;
    Ok(HParams {
        n_vocab: embeddings[0],
        n_audio_ctx: audio_pe[0],
        n_audio_state: audio_pe[1],
        n_audio_head: scalar(model, "encoder/num_heads")?,
        n_audio_layer: model.count_scopes("encoder/layer"),
        n_text_ctx: text_pe[0],
        n_text_state: embeddings[1],
        n_text_head: scalar(model, "decoder/num_heads")?,
        n_text_layer: model.count_scopes("decoder/layer"),
        n_mels: conv1[1],
    })
}

/// Plans every tensor whisper.cpp loads, checking shapes on the way.
fn plan<'m, 'a>(
    model: &'m Ct2Model<'a>,
    hp: &HParams,
) -> Result<Vec<Tensor<'m, 'a>>, ConvertError> {
    let mut p = Plan {
        model,
        tensors: Vec::new(),
    };
    let s = hp.n_audio_state;
    if hp.n_text_state != s {
        return Err(ConvertError::Shape {
            name: "decoder/embeddings/weight".into(),
            actual: vec![hp.n_vocab, hp.n_text_state],
            expected: vec![hp.n_vocab, s],
        });
    }
    // Encoder.
    let pe = p.shaped("encoder/position_encodings/encodings", &[hp.n_audio_ctx, s])?;
    p.push(
        "encoder.positional_embedding".into(),
        pe,
        0..hp.n_audio_ctx,
        vec![s, hp.n_audio_ctx],
        Out::F32,
    );
    for (conv, inp) in [("conv1", hp.n_mels), ("conv2", s)] {
        let w = p.shaped(&format!("encoder/{conv}/weight"), &[s, inp, 3])?;
        p.push(
            format!("encoder.{conv}.weight"),
            w,
            0..s,
            vec![3, inp, s],
            Out::F16,
        );
        let b = p.shaped(&format!("encoder/{conv}/bias"), &[s])?;
        // whisper.cpp keeps the convolution biases as [1, n_state].
        p.push(
            format!("encoder.{conv}.bias"),
            b,
            0..s,
            vec![1, s],
            Out::F32,
        );
    }
    for i in 0..hp.n_audio_layer {
        let (from, to) = (format!("encoder/layer_{i}"), format!("encoder.blocks.{i}"));
        p.fused(
            &format!("{from}/self_attention/linear_0"),
            &format!("{to}.attn"),
            &["query", "key", "value"],
            s,
        )?;
        p.linear(
            &format!("{from}/self_attention/linear_1"),
            &format!("{to}.attn.out"),
            s,
            s,
        )?;
        p.layer_norm(
            &format!("{from}/self_attention/layer_norm"),
            &format!("{to}.attn_ln"),
            s,
        )?;
        p.linear(
            &format!("{from}/ffn/linear_0"),
            &format!("{to}.mlp.0"),
            4 * s,
            s,
        )?;
        p.linear(
            &format!("{from}/ffn/linear_1"),
            &format!("{to}.mlp.2"),
            s,
            4 * s,
        )?;
        p.layer_norm(
            &format!("{from}/ffn/layer_norm"),
            &format!("{to}.mlp_ln"),
            s,
        )?;
    }
    p.layer_norm("encoder/layer_norm", "encoder.ln_post", s)?;
    // Decoder.
    let pe = p.shaped("decoder/position_encodings/encodings", &[hp.n_text_ctx, s])?;
    p.push(
        "decoder.positional_embedding".into(),
        pe,
        0..hp.n_text_ctx,
        vec![s, hp.n_text_ctx],
        Out::F32,
    );
    let te = p.shaped("decoder/embeddings/weight", &[hp.n_vocab, s])?;
    p.push(
        "decoder.token_embedding.weight".into(),
        te,
        0..hp.n_vocab,
        vec![s, hp.n_vocab],
        Out::Weight,
    );
    for i in 0..hp.n_text_layer {
        let (from, to) = (format!("decoder/layer_{i}"), format!("decoder.blocks.{i}"));
        p.fused(
            &format!("{from}/self_attention/linear_0"),
            &format!("{to}.attn"),
            &["query", "key", "value"],
            s,
        )?;
        p.linear(
            &format!("{from}/self_attention/linear_1"),
            &format!("{to}.attn.out"),
            s,
            s,
        )?;
        p.layer_norm(
            &format!("{from}/self_attention/layer_norm"),
            &format!("{to}.attn_ln"),
            s,
        )?;
        p.linear(
            &format!("{from}/attention/linear_0"),
            &format!("{to}.cross_attn.query"),
            s,
            s,
        )?;
        p.fused(
            &format!("{from}/attention/linear_1"),
            &format!("{to}.cross_attn"),
            &["key", "value"],
            s,
        )?;
        p.linear(
            &format!("{from}/attention/linear_2"),
            &format!("{to}.cross_attn.out"),
            s,
            s,
        )?;
        p.layer_norm(
            &format!("{from}/attention/layer_norm"),
            &format!("{to}.cross_attn_ln"),
            s,
        )?;
        p.linear(
            &format!("{from}/ffn/linear_0"),
            &format!("{to}.mlp.0"),
            4 * s,
            s,
        )?;
        p.linear(
            &format!("{from}/ffn/linear_1"),
            &format!("{to}.mlp.2"),
            s,
            4 * s,
        )?;
        p.layer_norm(
            &format!("{from}/ffn/layer_norm"),
            &format!("{to}.mlp_ln"),
            s,
        )?;
    }
    p.layer_norm("decoder/layer_norm", "decoder.ln", s)?;
    Ok(p.tensors)
}

fn put_i32(out: &mut Vec<u8>, value: usize) {
    // Every value written is a dimension or count far below i32::MAX,
    // checked against the file's own u32 sizes.
    out.extend_from_slice(&(value as i32).to_le_bytes());
}

/// Appends `tensor` in ggml's layout, its matrices in `quant`.
fn write_tensor(out: &mut Vec<u8>, tensor: &Tensor<'_, '_>, quant: Quant) {
    let kind = match tensor.out {
        Out::Weight if quant != Quant::F16 => None,
        Out::F32 => Some(Out::F32),
        Out::F16 | Out::Weight => Some(Out::F16),
    };
    put_i32(out, tensor.ne.len());
    put_i32(out, tensor.name.len());
    put_i32(
        out,
        match kind {
            Some(Out::F32) => 0,
            Some(_) => 1,
            None => quant.ggml_type(),
        },
    );
    for d in &tensor.ne {
        put_i32(out, *d);
    }
    out.extend_from_slice(tensor.name.as_bytes());
    let source = tensor.source;
    let size = source.dtype.size();
    let row: usize = source.dims().iter().skip(1).product::<usize>() * size;
    let bytes = &source.data[tensor.rows.start * row..tensor.rows.end * row];
    match (source.dtype, kind) {
        (DType::F16, Some(Out::F16)) | (DType::F32, Some(Out::F32)) => {
            out.extend_from_slice(bytes);
        }
        (DType::F16, Some(Out::F32)) => {
            for e in bytes.chunks_exact(2) {
                let value = f16_to_f32(u16::from_le_bytes([e[0], e[1]]));
                out.extend_from_slice(&value.to_le_bytes());
            }
        }
        (_, Some(_)) => {
            for e in bytes.chunks_exact(4) {
                let value = f32::from_le_bytes([e[0], e[1], e[2], e[3]]);
                out.extend_from_slice(&f32_to_f16(value).to_le_bytes());
            }
        }
        (_, None) => {
            // Row by row (rows are whole blocks long): a block never mixes
            // two rows' values.
            let mut values = Vec::with_capacity(row / size);
            for chunk in bytes.chunks_exact(row) {
                values.clear();
                if source.dtype == DType::F16 {
                    values.extend(
                        chunk
                            .chunks_exact(2)
                            .map(|e| f16_to_f32(u16::from_le_bytes([e[0], e[1]]))),
                    );
                } else {
                    values.extend(
                        chunk
                            .chunks_exact(4)
                            .map(|e| f32::from_le_bytes([e[0], e[1], e[2], e[3]])),
                    );
                }
                quant.write(&values, out);
            }
        }
    }
}

/// Converts a CTranslate2 Whisper model (`model.bin` bytes and
/// `vocabulary.txt` text) into a whisper.cpp model file's bytes, its
/// weight matrices in `quant`.
pub(crate) fn convert(
    model_bin: &[u8],
    vocabulary: &str,
    quant: Quant,
) -> Result<(HParams, Vec<u8>), ConvertError> {
    let model = Ct2Model::parse(model_bin)?;
    let hp = hparams(&model)?;
    let vocabulary = vocab::parse(vocabulary)?;
    if vocabulary.total != hp.n_vocab {
        return Err(ConvertError::VocabularySize {
            actual: vocabulary.total,
            expected: hp.n_vocab,
        });
    }
    let tensors = plan(&model, &hp)?;
    for tensor in tensors.iter().filter(|t| t.out == Out::Weight) {
        if !quant.fits(tensor.ne[0]) {
            return Err(ConvertError::Blocks {
                name: tensor.name.clone(),
                len: tensor.ne[0],
                quant: quant.name(),
            });
        }
    }
    let filters = mel::filters(hp.n_mels);

    let mut out = Vec::with_capacity(model_bin.len() + model_bin.len() / 8);
    out.extend_from_slice(&GGML_MAGIC.to_le_bytes());
    for value in [
        hp.n_vocab,
        hp.n_audio_ctx,
        hp.n_audio_state,
        hp.n_audio_head,
        hp.n_audio_layer,
        hp.n_text_ctx,
        hp.n_text_state,
        hp.n_text_head,
        hp.n_text_layer,
        hp.n_mels,
        quant.ftype(),
    ] {
        put_i32(&mut out, value);
    }
    put_i32(&mut out, hp.n_mels);
    put_i32(&mut out, mel::N_BINS);
    for w in &filters {
        out.extend_from_slice(&w.to_le_bytes());
    }
    put_i32(&mut out, vocabulary.tokens.len());
    for token in &vocabulary.tokens {
        put_i32(&mut out, token.len());
        out.extend_from_slice(token);
    }
    for tensor in &tensors {
        write_tensor(&mut out, tensor, quant);
    }
    Ok((hp, out))
}

/// Whether `bytes` start like a whisper.cpp model file.
pub(crate) fn is_ggml(bytes: &[u8]) -> bool {
    bytes.get(..4) == Some(&GGML_MAGIC.to_le_bytes())
}

#[cfg(test)]
mod tests;
