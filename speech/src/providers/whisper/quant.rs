//! ggml's weight formats for the converted model's matrices: 16-bit floats
//! or ggml's block quantizations `q8_0` and `q5_0`.
//!
//! Rules: the blocks are ggml's reference ones (`ggml-quants.c`,
//! `quantize_row_q8_0_ref` and `quantize_row_q5_0_ref`), 32 values each,
//! little-endian: `q8_0` is an f16 scale `d = max|x| / 127` and 32 `i8`
//! `round(x / d)` (34 bytes); `q5_0` an f16 scale `d = m / -16` (`m` the
//! value of largest magnitude, sign kept), the 32 fifth bits (`u32`) and 16
//! bytes of low nibbles, value `j` in the low nibble of byte `j` and value
//! `16 + j` in its high one (22 bytes). A block never straddles two rows:
//! a matrix is quantized only if its rows are a multiple of 32 long, which
//! every Whisper size's are; the caller refuses others. As whisper.cpp's
//! own `quantize` does, only the two-dimensional weight matrices take the
//! format; convolution kernels stay f16, biases, norms and positional
//! embeddings f32 (the converter decides which is which).

use super::half::f32_to_f16;

/// Values per quantization block.
pub(crate) const BLOCK: usize = 32;

/// The format of the weight matrices (whisper.cpp's `wtype`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub(crate) enum Quant {
    /// IEEE half precision, as CTranslate2 stores them.
    #[default]
    F16,
    /// 8-bit blocks, one f16 scale per 32 values (8.5 bits a weight).
    Q8_0,
    /// 5-bit blocks, one f16 scale per 32 values (5.5 bits a weight).
    Q5_0,
}

/// ggml's `GGML_QNT_VERSION * GGML_QNT_VERSION_FACTOR`, which quantized
/// files add to their `ftype` (whisper.cpp's loader takes it modulo 1000).
const QNT_VERSION: usize = 2 * 1000;

impl Quant {
    /// Every format, in the order a model name's suffix is tried.
    pub(crate) const ALL: [Self; 3] = [Self::F16, Self::Q8_0, Self::Q5_0];

    /// The name used in model names (`base-q8_0`) and cache files.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::F16 => "f16",
            Self::Q8_0 => "q8_0",
            Self::Q5_0 => "q5_0",
        }
    }

    /// The header's `ftype` (ggml's `GGML_FTYPE_MOSTLY_*`, plus the
    /// quantization version for the quantized ones).
    pub(crate) fn ftype(self) -> usize {
        match self {
            Self::F16 => 1,
            Self::Q8_0 => QNT_VERSION + 7,
            Self::Q5_0 => QNT_VERSION + 8,
        }
    }

    /// A tensor's type id (ggml's `GGML_TYPE_*`).
    pub(crate) fn ggml_type(self) -> usize {
        match self {
            Self::F16 => 1,
            Self::Q8_0 => 8,
            Self::Q5_0 => 6,
        }
    }

    /// Whether rows of `len` values can take this format.
    pub(crate) fn fits(self, len: usize) -> bool {
        self == Self::F16 || len.is_multiple_of(BLOCK)
    }

    /// Appends `values` (a whole number of blocks for the quantized
    /// formats, which [`Quant::fits`] ensures) in this format.
    pub(crate) fn write(self, values: &[f32], out: &mut Vec<u8>) {
        match self {
            Self::F16 => {
                for v in values {
                    out.extend_from_slice(&f32_to_f16(*v).to_le_bytes());
                }
            }
            Self::Q8_0 => values.chunks_exact(BLOCK).for_each(|b| q8_0(b, out)),
            Self::Q5_0 => values.chunks_exact(BLOCK).for_each(|b| q5_0(b, out)),
        }
    }
}

/// One `block_q8_0`.
fn q8_0(block: &[f32], out: &mut Vec<u8>) {
    let amax = block.iter().fold(0.0_f32, |m, v| m.max(v.abs()));
    let d = amax / 127.0;
    let id = if d == 0.0 { 0.0 } else { 1.0 / d };
    out.extend_from_slice(&f32_to_f16(d).to_le_bytes());
    // |v * id| <= 127, so the cast never saturates.
    out.extend(block.iter().map(|v| (v * id).round() as i8 as u8));
}

/// One `block_q5_0`.
fn q5_0(block: &[f32], out: &mut Vec<u8>) {
    let (mut amax, mut max) = (0.0_f32, 0.0_f32);
    for v in block {
        if v.abs() > amax {
            amax = v.abs();
            max = *v;
        }
    }
    let d = max / -16.0;
    let id = if d == 0.0 { 0.0 } else { 1.0 / d };
    let level = |v: f32| ((v * id + 16.5) as i8).min(31) as u8;
    let mut qh = 0_u32;
    let mut qs = [0_u8; BLOCK / 2];
    for j in 0..BLOCK / 2 {
        let (lo, hi) = (level(block[j]), level(block[j + BLOCK / 2]));
        qs[j] = (lo & 0x0f) | ((hi & 0x0f) << 4);
        qh |= u32::from((lo & 0x10) >> 4) << j;
        qh |= u32::from((hi & 0x10) >> 4) << (j + BLOCK / 2);
    }
    out.extend_from_slice(&f32_to_f16(d).to_le_bytes());
    out.extend_from_slice(&qh.to_le_bytes());
    out.extend_from_slice(&qs);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::whisper::half::f16_to_f32;

    fn ramp() -> Vec<f32> {
        (0..BLOCK).map(|i| (i as f32 - 10.0) * 0.03125).collect()
    }

    fn dequant_q8_0(bytes: &[u8]) -> Vec<f32> {
        let d = f16_to_f32(u16::from_le_bytes([bytes[0], bytes[1]]));
        bytes[2..34]
            .iter()
            .map(|q| f32::from(*q as i8) * d)
            .collect()
    }

    fn dequant_q5_0(bytes: &[u8]) -> Vec<f32> {
        let d = f16_to_f32(u16::from_le_bytes([bytes[0], bytes[1]]));
        let qh = u32::from_le_bytes([bytes[2], bytes[3], bytes[4], bytes[5]]);
        let mut out = vec![0.0; BLOCK];
        for j in 0..BLOCK / 2 {
            let q = bytes[6 + j];
            let lo = (q & 0x0f) | ((((qh >> j) & 1) as u8) << 4);
            let hi = (q >> 4) | ((((qh >> (j + 16)) & 1) as u8) << 4);
            out[j] = (f32::from(lo) - 16.0) * d;
            out[j + 16] = (f32::from(hi) - 16.0) * d;
        }
        out
    }

    #[test]
    fn q8_0_blocks_are_ggml_s_layout_and_round_trip_within_half_a_step() {
        let values = ramp();
        let mut out = Vec::new();
        Quant::Q8_0.write(&values, &mut out);
        assert_eq!(out.len(), 34);
        // max |x| = 21 * 0.03125; the largest value is exactly 127 steps.
        assert_eq!(out[2 + 31] as i8, 127);
        assert_eq!(out[2 + 10] as i8, 0);
        let d = 21.0 * 0.031_25 / 127.0;
        for (v, back) in values.iter().zip(dequant_q8_0(&out)) {
            assert!((v - back).abs() <= d * 0.51, "{v} -> {back}");
        }
        let mut zeros = Vec::new();
        Quant::Q8_0.write(&[0.0; BLOCK], &mut zeros);
        assert_eq!(zeros, vec![0; 34]);
    }

    #[test]
    fn q5_0_blocks_are_ggml_s_layout_and_round_trip_within_a_step() {
        let values: Vec<f32> = ramp().into_iter().map(|v| -v).collect();
        let mut out = Vec::new();
        Quant::Q5_0.write(&values, &mut out);
        assert_eq!(out.len(), 22);
        let d = f16_to_f32(u16::from_le_bytes([out[0], out[1]]));
        // The largest magnitude is -0.65625 (value 31): d = m / -16 > 0.
        assert!((d - 0.656_25 / 16.0).abs() < 1e-4, "{d}");
        for (v, back) in values.iter().zip(dequant_q5_0(&out)) {
            assert!((v - back).abs() <= d * 1.01, "{v} -> {back}");
        }
    }

    #[test]
    fn formats_have_ggml_s_numbers_and_fit_whole_blocks() {
        assert_eq!(
            Quant::ALL.map(|q| (q.ftype() % 1000, q.ggml_type())),
            [(1, 1), (7, 8), (8, 6)]
        );
        assert!(Quant::Q8_0.fits(384) && Quant::Q5_0.fits(512));
        assert!(!Quant::Q8_0.fits(48) && Quant::F16.fits(48));
        let mut out = Vec::new();
        Quant::F16.write(&[1.0, -2.0], &mut out);
        assert_eq!(out, [0x00, 0x3c, 0x00, 0xc0]);
    }
}
