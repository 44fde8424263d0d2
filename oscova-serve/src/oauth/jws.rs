//! Compact JWS (RFC 7515) parsing and signature checks, with `ring`.
//!
//! Rules: a token is exactly three base64url (unpadded) segments; the
//! header's `alg` must be one of [`Alg`] (RS256, ES256, EdDSA): `none`,
//! every HMAC algorithm and anything else are refused before any key is
//! looked at, so a public key can never be used as an HMAC secret. A key
//! verifies only the algorithm its type fixes (RSA for RS256, EC P-256
//! for ES256, OKP Ed25519 for EdDSA) and, when its JWK names an `alg`,
//! only that one. RSA keys must be 2048 bits or more. Nothing here reads
//! the claims beyond decoding them; `claims.rs` checks them.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey};
use serde::Deserialize;

/// The signature algorithms accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Alg {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    Rs256,
    /// ECDSA on P-256 with SHA-256.
    Es256,
    /// Ed25519.
    EdDsa,
}

impl Alg {
    fn parse(name: &str) -> Option<Self> {
        match name {
            "RS256" => Some(Self::Rs256),
            "ES256" => Some(Self::Es256),
            "EdDSA" => Some(Self::EdDsa),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Rs256 => "RS256",
            Self::Es256 => "ES256",
            Self::EdDsa => "EdDSA",
        }
    }
}

/// Why a token is not a well-formed JWS with an accepted algorithm.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum JwsError {
    /// Not three base64url segments, or a header or payload that is not
    /// a JSON object.
    #[error("the token is not a compact JWS")]
    Malformed,
    /// `alg` is not RS256, ES256 or EdDSA.
    #[error("the token's algorithm `{0}` is not accepted (RS256, ES256, EdDSA only)")]
    Alg(String),
}

#[derive(Deserialize)]
struct RawHeader {
    alg: String,
    #[serde(default)]
    kid: Option<String>,
    #[serde(default)]
    crit: Option<serde_json::Value>,
}

/// A parsed token, signature not yet checked.
#[derive(Debug)]
pub(crate) struct Jws {
    pub(crate) alg: Alg,
    pub(crate) kid: Option<String>,
    /// `header.payload`, the bytes signed.
    signed: Vec<u8>,
    signature: Vec<u8>,
    pub(crate) payload: Vec<u8>,
}

impl Jws {
    /// Parses `token`; refuses any algorithm but the three, and any
    /// `crit` header (no extension is understood).
    pub(crate) fn parse(token: &str) -> Result<Self, JwsError> {
        let mut parts = token.split('.');
        let (Some(header), Some(payload), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(JwsError::Malformed);
        };
        let decode = |part: &str| {
            URL_SAFE_NO_PAD
                .decode(part)
                .map_err(|_| JwsError::Malformed)
        };
        let raw: RawHeader =
            serde_json::from_slice(&decode(header)?).map_err(|_| JwsError::Malformed)?;
        let alg = Alg::parse(&raw.alg).ok_or_else(|| JwsError::Alg(raw.alg.clone()))?;
        if raw.crit.is_some() {
            return Err(JwsError::Malformed);
        }
        let signature = decode(signature)?;
        if signature.is_empty() {
            return Err(JwsError::Malformed);
        }
        let signed_len = header.len() + 1 + payload.len();
        let payload = decode(payload)?;
        Ok(Self {
            alg,
            kid: raw.kid,
            signed: token
                .as_bytes()
                .get(..signed_len)
                .ok_or(JwsError::Malformed)?
                .to_vec(),
            signature,
            payload,
        })
    }

    /// Whether `key` signed this token.
    pub(crate) fn verified_by(&self, key: &PublicKey) -> bool {
        if !key.verifies(self.alg) {
            return false;
        }
        let (msg, sig) = (self.signed.as_slice(), self.signature.as_slice());
        match &key.material {
            Material::Rsa { n, e } => RsaPublicKeyComponents { n, e }
                .verify(&signature::RSA_PKCS1_2048_8192_SHA256, msg, sig)
                .is_ok(),
            Material::P256(point) => {
                UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point)
                    .verify(msg, sig)
                    .is_ok()
            }
            Material::Ed25519(x) => UnparsedPublicKey::new(&signature::ED25519, x)
                .verify(msg, sig)
                .is_ok(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Material {
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
    /// The uncompressed point: 0x04, x, y.
    P256(Vec<u8>),
    Ed25519(Vec<u8>),
}

/// One verification key from a JWKS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PublicKey {
    pub(crate) kid: Option<String>,
    /// The JWK's own `alg`, when it names one.
    alg: Option<String>,
    material: Material,
}

#[derive(Deserialize)]
struct RawJwk {
    kty: String,
    #[serde(default)]
    kid: Option<String>,
    #[serde(default)]
    alg: Option<String>,
    #[serde(default, rename = "use")]
    usage: Option<String>,
    #[serde(default)]
    crv: Option<String>,
    #[serde(default)]
    n: Option<String>,
    #[serde(default)]
    e: Option<String>,
    #[serde(default)]
    x: Option<String>,
    #[serde(default)]
    y: Option<String>,
}

impl PublicKey {
    /// The signature keys of a JWKS document; keys of other types, for
    /// encryption, or malformed are skipped.
    pub(crate) fn set_from_json(body: &[u8]) -> Option<Vec<Self>> {
        #[derive(Deserialize)]
        struct Set {
            keys: Vec<serde_json::Value>,
        }
        let set: Set = serde_json::from_slice(body).ok()?;
        Some(
            set.keys
                .into_iter()
                .filter_map(|value| serde_json::from_value::<RawJwk>(value).ok())
                .filter_map(Self::from_raw)
                .collect(),
        )
    }

    fn from_raw(raw: RawJwk) -> Option<Self> {
        if raw.usage.as_deref().is_some_and(|u| u != "sig") {
            return None;
        }
        let bytes = |v: &Option<String>| URL_SAFE_NO_PAD.decode(v.as_deref()?).ok();
        let material = match (raw.kty.as_str(), raw.crv.as_deref()) {
            ("RSA", _) => {
                let n = strip_zeros(bytes(&raw.n)?);
                // ring refuses smaller moduli itself; said here for clarity.
                (n.len() >= 256).then_some(())?;
                Material::Rsa {
                    n,
                    e: strip_zeros(bytes(&raw.e)?),
                }
            }
            ("EC", Some("P-256")) => {
                let (x, y) = (bytes(&raw.x)?, bytes(&raw.y)?);
                (x.len() == 32 && y.len() == 32).then_some(())?;
                let mut point = vec![4u8];
                point.extend(x);
                point.extend(y);
                Material::P256(point)
            }
            ("OKP", Some("Ed25519")) => {
                let x = bytes(&raw.x)?;
                (x.len() == 32).then_some(())?;
                Material::Ed25519(x)
            }
            _ => return None,
        };
        Some(Self {
            kid: raw.kid,
            alg: raw.alg,
            material,
        })
    }

    /// Whether this key may verify `alg`: its type fixes one algorithm,
    /// and its JWK's `alg`, if any, must be that one.
    pub(crate) fn verifies(&self, alg: Alg) -> bool {
        let by_type = match self.material {
            Material::Rsa { .. } => Alg::Rs256,
            Material::P256(_) => Alg::Es256,
            Material::Ed25519(_) => Alg::EdDsa,
        };
        by_type == alg && self.alg.as_deref().is_none_or(|a| a == alg.name())
    }
}

fn strip_zeros(mut bytes: Vec<u8>) -> Vec<u8> {
    let zeros = bytes.iter().take_while(|b| **b == 0).count();
    bytes.drain(..zeros.min(bytes.len().saturating_sub(1)));
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::rand::SystemRandom;
    use ring::signature::{EcdsaKeyPair, Ed25519KeyPair, KeyPair};

    fn b64(bytes: &[u8]) -> String {
        URL_SAFE_NO_PAD.encode(bytes)
    }

    fn ec_key() -> (EcdsaKeyPair, PublicKey) {
        let rng = SystemRandom::new();
        let alg = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(alg, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).unwrap();
        let point = pair.public_key().as_ref().to_vec();
        let jwk = serde_json::json!({"keys": [{"kty": "EC", "crv": "P-256", "kid": "k",
            "x": b64(&point[1..33]), "y": b64(&point[33..])}]});
        let key = PublicKey::set_from_json(jwk.to_string().as_bytes()).unwrap();
        (pair, key[0].clone())
    }

    fn signed(header: &str, payload: &str, sign: impl Fn(&[u8]) -> Vec<u8>) -> String {
        let input = format!("{}.{}", b64(header.as_bytes()), b64(payload.as_bytes()));
        let sig = sign(input.as_bytes());
        format!("{input}.{}", b64(&sig))
    }

    #[test]
    fn es256_and_ed25519_signatures_verify_and_altered_ones_do_not() {
        let (pair, key) = ec_key();
        let rng = SystemRandom::new();
        let token = signed(r#"{"alg":"ES256","kid":"k"}"#, r#"{"sub":"a"}"#, |m| {
            pair.sign(&rng, m).unwrap().as_ref().to_vec()
        });
        let jws = Jws::parse(&token).unwrap();
        assert_eq!(jws.kid.as_deref(), Some("k"));
        assert!(jws.verified_by(&key));
        // The payload changed after signing.
        let mut parts: Vec<&str> = token.split('.').collect();
        let other = b64(br#"{"sub":"b"}"#);
        parts[1] = &other;
        assert!(!Jws::parse(&parts.join(".")).unwrap().verified_by(&key));

        let ed = Ed25519KeyPair::from_pkcs8(Ed25519KeyPair::generate_pkcs8(&rng).unwrap().as_ref())
            .unwrap();
        let jwk = serde_json::json!({"keys": [{"kty": "OKP", "crv": "Ed25519",
            "x": b64(ed.public_key().as_ref())}]});
        let ed_key = PublicKey::set_from_json(jwk.to_string().as_bytes()).unwrap();
        let token = signed(r#"{"alg":"EdDSA"}"#, "{}", |m| ed.sign(m).as_ref().to_vec());
        assert!(Jws::parse(&token).unwrap().verified_by(&ed_key[0]));
        // A key verifies only its own algorithm.
        assert!(!Jws::parse(&token).unwrap().verified_by(&key));
    }

    #[test]
    fn none_hmac_crit_and_malformed_tokens_are_refused() {
        for alg in ["none", "HS256", "HS512", "RS512", "PS256", "ES384"] {
            let token = signed(&format!(r#"{{"alg":"{alg}"}}"#), "{}", |_| vec![1]);
            assert_eq!(
                Jws::parse(&token).unwrap_err(),
                JwsError::Alg(alg.to_owned())
            );
        }
        let crit = signed(r#"{"alg":"ES256","crit":["x"],"x":1}"#, "{}", |_| vec![1]);
        let unsigned = format!("{}.{}.", b64(br#"{"alg":"ES256"}"#), b64(b"{}"));
        for bad in ["", "a.b", "a.b.c.d", "!!.e30.AA", crit.as_str(), &unsigned] {
            assert_eq!(Jws::parse(bad).unwrap_err(), JwsError::Malformed, "{bad}");
        }
    }

    #[test]
    fn jwks_keeps_signature_keys_it_understands() {
        let set = serde_json::json!({"keys": [
            {"kty": "oct", "k": "c2VjcmV0"},
            {"kty": "RSA", "n": b64(&[1; 128]), "e": "AQAB"},
            {"kty": "EC", "crv": "P-384", "x": b64(&[1; 48]), "y": b64(&[1; 48])},
            {"kty": "OKP", "crv": "Ed25519", "use": "enc", "x": b64(&[1; 32])},
            {"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "kid": "ok", "x": b64(&[1; 32])},
        ]});
        let keys = PublicKey::set_from_json(set.to_string().as_bytes()).unwrap();
        assert_eq!(keys.len(), 1, "{keys:?}");
        assert_eq!(keys[0].kid.as_deref(), Some("ok"));
        assert!(keys[0].verifies(Alg::EdDsa) && !keys[0].verifies(Alg::Es256));
    }
}
