//! Prompt tokens of an OpenAI-style JSON request: a cheap estimate sizes the reservation, and
//! the exact count (the model's own tokenizer) is made only when the answer brings no usage.
//!
//! Exact counting was the costliest step of admission: about 0.5 ms of CPU per KB of prompt
//! with o200k, and the encoder tables take ~46 MB (o200k) and ~25 MB (cl100k) of memory once
//! loaded. A reservation only has to bound the request's cost until the upstream's usage
//! settles it, so Tollgate's estimator (see [`crate::relay::measure::tokenize`]) is enough there; upstreams
//! that report usage — nearly all of them — never load the tables.

use axum::body::Bytes;

/// Prompt tokens of one request.
#[derive(Debug, Clone)]
pub struct Prompt {
    /// By Tollgate's estimator (what the reservation uses).
    estimate: i64,
    /// How to get the exact count.
    exact: Exact,
}

#[derive(Debug, Clone)]
enum Exact {
    /// Already known (the estimator is the model's counter, or it was counted up front).
    Known(i64),
    /// Count the request body's texts with `model`'s tokenizer when asked.
    Body { body: Bytes, model: String },
}

impl Prompt {
    /// A count that is both the estimate and the exact figure.
    pub fn known(tokens: i64) -> Prompt {
        Prompt {
            estimate: tokens,
            exact: Exact::Known(tokens),
        }
    }

    /// An `estimate` now; the exact count of `body` (an OpenAI-style JSON request) with
    /// `model`'s tokenizer on demand.
    ///
    /// The body is copied: a request body is a slice of its connection's read buffer, and
    /// keeping the slice for as long as the answer streams would keep that whole buffer
    /// (8 KiB and up) alive beside the one the connection goes on reading into.
    pub fn deferred(estimate: i64, body: &[u8], model: String) -> Prompt {
        Prompt {
            estimate,
            exact: Exact::Body {
                body: Bytes::copy_from_slice(body),
                model,
            },
        }
    }

    /// Whether the exact count is known already (else [`Prompt::exact`] counts the body).
    pub fn is_known(&self) -> bool {
        matches!(self.exact, Exact::Known(_))
    }

    /// The estimate, for the reservation.
    pub fn estimate(&self) -> i64 {
        self.estimate
    }

    /// The exact count, for a settlement without upstream usage (counts the body on each
    /// call; settlement calls it at most once).
    pub fn exact(&self) -> i64 {
        match &self.exact {
            Exact::Known(tokens) => *tokens,
            Exact::Body { body, model } => {
                crate::relay::measure::request_head::exact_prompt(body, model)
                    .unwrap_or(self.estimate)
            }
        }
    }
}
