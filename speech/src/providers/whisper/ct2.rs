//! Reads a CTranslate2 `model.bin` (binary format version 6), as written by
//! `ModelSpec._serialize` in CTranslate2's `python/ctranslate2/specs/model_spec.py`.
//!
//! Rules: the layout, all little-endian, is: `u32` version, the spec's name
//! (a string), `u32` spec revision, `u32` variable count, then per variable
//! its name, `u8` rank, `u32` dimensions, `u8` type id (the order of
//! CTranslate2's `DataType` enum: float32, int8, int16, int32, float16,
//! bfloat16), `u32` byte count and the bytes; then a `u32` alias count and
//! alias/target name pairs. A string is a `u16` length counting a trailing
//! NUL, its UTF-8 bytes and the NUL. Nothing is copied: variables borrow the
//! file's bytes. Every length is checked against what is left, so a
//! truncated or foreign file is an error naming the offset, never a panic.

use std::collections::BTreeMap;

/// The binary format version this reader understands.
pub(crate) const BINARY_VERSION: u32 = 6;

/// A variable's element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DType {
    F32,
    I8,
    I16,
    I32,
    F16,
    BF16,
}

impl DType {
    fn from_id(id: u8) -> Option<Self> {
        Some(match id {
            0 => Self::F32,
            1 => Self::I8,
            2 => Self::I16,
            3 => Self::I32,
            4 => Self::F16,
            5 => Self::BF16,
            _ => return None,
        })
    }

    /// Bytes per element.
    pub(crate) fn size(self) -> usize {
        match self {
            Self::I8 => 1,
            Self::I16 | Self::F16 | Self::BF16 => 2,
            Self::F32 | Self::I32 => 4,
        }
    }

    /// CTranslate2's name for the type.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::F32 => "float32",
            Self::I8 => "int8",
            Self::I16 => "int16",
            Self::I32 => "int32",
            Self::F16 => "float16",
            Self::BF16 => "bfloat16",
        }
    }
}

/// One stored variable.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Variable<'a> {
    pub(crate) shape: &'a [u8],
    pub(crate) rank: usize,
    pub(crate) dtype: DType,
    pub(crate) data: &'a [u8],
}

impl Variable<'_> {
    /// The dimensions, outermost first.
    pub(crate) fn dims(&self) -> Vec<usize> {
        self.shape
            .chunks_exact(4)
            .map(|d| u32::from_le_bytes([d[0], d[1], d[2], d[3]]) as usize)
            .collect()
    }

    /// The value of a scalar integer variable (such as `num_heads`).
    pub(crate) fn scalar_int(&self) -> Option<i64> {
        if self.rank != 0 {
            return None;
        }
        let d = self.data;
        match (self.dtype, d.len()) {
            (DType::I8, 1) => Some(i64::from(d[0] as i8)),
            (DType::I16, 2) => Some(i64::from(i16::from_le_bytes([d[0], d[1]]))),
            (DType::I32, 4) => Some(i64::from(i32::from_le_bytes([d[0], d[1], d[2], d[3]]))),
            _ => None,
        }
    }
}

/// A parsed `model.bin`.
#[derive(Debug)]
pub(crate) struct Ct2Model<'a> {
    /// The specification's name, `WhisperSpec` for Whisper.
    pub(crate) spec: String,
    variables: BTreeMap<String, Variable<'a>>,
    aliases: BTreeMap<String, String>,
}

/// Why a `model.bin` could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Ct2Error {
    #[error("the file ends at byte {offset} in the middle of {what}")]
    Truncated { offset: usize, what: &'static str },
    #[error("binary format version {0} is not supported (only version {BINARY_VERSION})")]
    Version(u32),
    #[error("a name at byte {offset} is not NUL-terminated UTF-8")]
    BadString { offset: usize },
    #[error("variable `{name}` has unknown type id {id}")]
    BadType { name: String, id: u8 },
    #[error("variable `{name}` holds {actual} bytes, but its shape and type need {expected}")]
    BadSize {
        name: String,
        expected: usize,
        actual: usize,
    },
    #[error("{0} bytes follow the last alias")]
    Trailing(usize),
}

/// A cursor over the file's bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    offset: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, len: usize, what: &'static str) -> Result<&'a [u8], Ct2Error> {
        let end = self
            .offset
            .checked_add(len)
            .filter(|end| *end <= self.bytes.len())
            .ok_or(Ct2Error::Truncated {
                offset: self.offset,
                what,
            })?;
        let slice = &self.bytes[self.offset..end];
        self.offset = end;
        Ok(slice)
    }

    fn u8(&mut self, what: &'static str) -> Result<u8, Ct2Error> {
        Ok(self.take(1, what)?[0])
    }

    fn u16(&mut self, what: &'static str) -> Result<u16, Ct2Error> {
        let b = self.take(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, Ct2Error> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn string(&mut self, what: &'static str) -> Result<String, Ct2Error> {
        let offset = self.offset;
        let len = usize::from(self.u16(what)?);
        let bytes = self.take(len, what)?;
        match bytes.split_last() {
            Some((0, text)) => std::str::from_utf8(text)
                .map(str::to_owned)
                .map_err(|_| Ct2Error::BadString { offset }),
            _ => Err(Ct2Error::BadString { offset }),
        }
    }
}

impl<'a> Ct2Model<'a> {
    /// Parses `bytes`, the whole `model.bin`.
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<Self, Ct2Error> {
        let mut r = Reader { bytes, offset: 0 };
        let version = r.u32("the format version")?;
        if version != BINARY_VERSION {
            return Err(Ct2Error::Version(version));
        }
        let spec = r.string("the spec name")?;
        let _revision = r.u32("the spec revision")?;
        let count = r.u32("the variable count")?;
        let mut variables = BTreeMap::new();
        for _ in 0..count {
            let name = r.string("a variable name")?;
            let rank = usize::from(r.u8("a rank")?);
            let shape = r.take(4 * rank, "a shape")?;
            let id = r.u8("a type id")?;
            let dtype = DType::from_id(id).ok_or_else(|| Ct2Error::BadType {
                name: name.clone(),
                id,
            })?;
            let len = r.u32("a byte count")? as usize;
            let data = r.take(len, "variable data")?;
            let variable = Variable {
                shape,
                rank,
                dtype,
                data,
            };
            let expected = variable
                .dims()
                .iter()
                .try_fold(dtype.size(), |n, d| n.checked_mul(*d));
            if expected != Some(len) {
                return Err(Ct2Error::BadSize {
                    name,
                    expected: expected.unwrap_or(usize::MAX),
                    actual: len,
                });
            }
            variables.insert(name, variable);
        }
        let count = r.u32("the alias count")?;
        let mut aliases = BTreeMap::new();
        for _ in 0..count {
            let alias = r.string("an alias")?;
            let target = r.string("an alias target")?;
            aliases.insert(alias, target);
        }
        let rest = bytes.len() - r.offset;
        if rest != 0 {
            return Err(Ct2Error::Trailing(rest));
        }
        Ok(Self {
            spec,
            variables,
            aliases,
        })
    }

    /// The variable `name`, following an alias.
    pub(crate) fn get(&self, name: &str) -> Option<&Variable<'a>> {
        self.variables
            .get(name)
            .or_else(|| self.variables.get(self.aliases.get(name)?))
    }

    /// How many `{prefix}_{i}/` scopes there are, counting from 0 without a
    /// gap (the number of encoder or decoder layers).
    pub(crate) fn count_scopes(&self, prefix: &str) -> usize {
        (0..)
            .take_while(|i| {
                let scope = format!("{prefix}_{i}/");
                self.variables
                    .range(scope.clone()..)
                    .next()
                    .is_some_and(|(name, _)| name.starts_with(&scope))
            })
            .count()
    }

    /// The number of variables (aliases not counted).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.variables.len()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Writes a model the way `ModelSpec._serialize` does.
    pub(crate) fn write_model(
        spec: &str,
        variables: &[(&str, &[u32], u8, Vec<u8>)],
        aliases: &[(&str, &str)],
    ) -> Vec<u8> {
        fn string(out: &mut Vec<u8>, text: &str) {
            out.extend_from_slice(&(text.len() as u16 + 1).to_le_bytes());
            out.extend_from_slice(text.as_bytes());
            out.push(0);
        }
        let mut out = Vec::new();
        out.extend_from_slice(&BINARY_VERSION.to_le_bytes());
        string(&mut out, spec);
        out.extend_from_slice(&3u32.to_le_bytes());
        out.extend_from_slice(&(variables.len() as u32).to_le_bytes());
        for (name, dims, dtype, data) in variables {
            string(&mut out, name);
            out.push(dims.len() as u8);
            for d in *dims {
                out.extend_from_slice(&d.to_le_bytes());
            }
            out.push(*dtype);
            out.extend_from_slice(&(data.len() as u32).to_le_bytes());
            out.extend_from_slice(data);
        }
        out.extend_from_slice(&(aliases.len() as u32).to_le_bytes());
        for (alias, target) in aliases {
            string(&mut out, alias);
            string(&mut out, target);
        }
        out
    }

    #[test]
    fn variables_scalars_and_aliases_are_read() {
        let bytes = write_model(
            "WhisperSpec",
            &[
                ("decoder/embeddings/weight", &[2, 3], 4, vec![0; 12]),
                ("encoder/layer_0/x", &[1], 0, vec![0; 4]),
                ("encoder/layer_1/x", &[1], 0, vec![0; 4]),
                ("encoder/layer_3/x", &[1], 0, vec![0; 4]),
                ("encoder/num_heads", &[], 2, 6i16.to_le_bytes().to_vec()),
            ],
            &[("decoder/projection/weight", "decoder/embeddings/weight")],
        );
        let model = Ct2Model::parse(&bytes).unwrap();
        assert_eq!(model.spec, "WhisperSpec");
        assert_eq!(model.len(), 5);
        let projection = model.get("decoder/projection/weight").unwrap();
        assert_eq!(projection.dims(), [2, 3]);
        assert_eq!(projection.dtype, DType::F16);
        assert_eq!(
            model.get("encoder/num_heads").unwrap().scalar_int(),
            Some(6)
        );
        assert_eq!(model.count_scopes("encoder/layer"), 2);
        assert_eq!(model.count_scopes("decoder/layer"), 0);
        assert!(model.get("missing").is_none());
    }

    #[test]
    fn damaged_files_are_errors_not_panics() {
        let good = write_model("WhisperSpec", &[("a", &[2], 4, vec![1, 2, 3, 4])], &[]);
        for cut in 0..good.len() {
            assert!(Ct2Model::parse(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = good.clone();
        longer.push(0);
        assert_eq!(Ct2Model::parse(&longer).unwrap_err(), Ct2Error::Trailing(1));
        let mut old = good.clone();
        old[0] = 5;
        assert_eq!(Ct2Model::parse(&old).unwrap_err(), Ct2Error::Version(5));
        let wrong = write_model("WhisperSpec", &[("a", &[3], 4, vec![1, 2, 3, 4])], &[]);
        assert!(matches!(
            Ct2Model::parse(&wrong).unwrap_err(),
            Ct2Error::BadSize {
                expected: 6,
                actual: 4,
                ..
            }
        ));
        let typed = write_model("WhisperSpec", &[("a", &[1], 9, vec![1])], &[]);
        assert!(matches!(
            Ct2Model::parse(&typed).unwrap_err(),
            Ct2Error::BadType { id: 9, .. }
        ));
    }
}
