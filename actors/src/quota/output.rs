//! The output limit of a request, decided where its reservation is made (inside the user's
//! critical section, so two concurrent requests can never both be granted the same balance):
//! the answer may be as long as what the caller's available balance covers, and no longer.
//!
//! available = min(the user's balance, a limited key's remaining quota) − running reservations;
//! L = min(the request's most output, ⌊(available − prompt units) ÷ units per output token⌋);
//! the reservation is prompt units + L's cost. Admission still asks that at least `least`
//! output tokens be covered (DefaultOutputReserve, or the request's own smaller limit), and a
//! `fixed` request (a body Tollgate may not change: pass-through channels, legacy completions)
//! that all of `most` be.
//!
//! A client's spend ceiling (`max_cost`, [`OutputAsk::max_units`]) lowers L the same way, to
//! what it covers beyond the prompt (at least one token), and admission then needs only that
//! much covered; a `fixed` body keeps its limit (the mid-stream ceiling still holds a stream
//! to the ceiling).

/// What a request asks of its user's ledger, by output tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutputAsk {
    /// Units of the prompt's part of the reservation.
    pub prompt_units: i64,
    /// Units one output token costs, every answer of the request together (> 0; a free
    /// output never limits the answer).
    pub per_token: f64,
    /// The most output tokens (per answer) the request may have: the client's limit, the
    /// model's maximum, or DefaultOutputCap.
    pub most: i64,
    /// The output tokens admission needs covered (≤ `most`).
    pub least: i64,
    /// A limit below `most` is capped at this (DefaultOutputCap for a model with no known
    /// maximum; `most` otherwise).
    pub lowered_cap: i64,
    /// The limit cannot be lowered: all of `most` must be covered.
    pub fixed: bool,
    /// The client's spend ceiling in units (`max_cost`): L is at most what it covers beyond
    /// the prompt (`None`: none).
    pub max_units: Option<i64>,
}

impl OutputAsk {
    /// The units of a reservation for `tokens` output tokens.
    pub fn units(&self, tokens: i64) -> i64 {
        let output = (tokens.max(0) as f64 * self.per_token.max(0.0)).ceil();
        let output = if output.is_finite() && output < 9.0e18 {
            #[expect(clippy::cast_possible_truncation, reason = "range checked just above")]
            let whole = output as i64;
            whole
        } else {
            i64::MAX
        };
        self.prompt_units.max(0).saturating_add(output)
    }

    /// The units admission needs available.
    pub fn needed(&self) -> i64 {
        if self.fixed {
            return self.units(self.most);
        }
        self.units(self.least.min(self.ceiling_limit().unwrap_or(i64::MAX)))
    }

    /// The output tokens `units` cover beyond the prompt (`i64::MAX` when output is free).
    fn covered(&self, units: i64) -> i64 {
        if self.per_token <= 0.0 {
            return i64::MAX;
        }
        let spare = units.saturating_sub(self.prompt_units.max(0)).max(0) as f64;
        let covered = (spare / self.per_token).floor();
        if covered.is_finite() && covered < 9.0e18 {
            #[expect(clippy::cast_possible_truncation, reason = "range checked just above")]
            let whole = covered as i64;
            whole
        } else {
            i64::MAX
        }
    }

    /// The most output the client's spend ceiling allows (at least one token; `None`: no
    /// ceiling, or a body whose limit cannot change).
    fn ceiling_limit(&self) -> Option<i64> {
        let max = self.max_units.filter(|_| !self.fixed)?;
        Some(self.covered(max).max(1))
    }

    /// The output limit `available` units cover (at least `least` when `available` ≥
    /// [`OutputAsk::needed`]), at most what the spend ceiling covers.
    pub fn limit(&self, available: i64) -> i64 {
        let by_balance = self.limit_by_balance(available);
        self.ceiling_limit()
            .map_or(by_balance, |ceiling| by_balance.min(ceiling))
    }

    /// [`OutputAsk::limit`] without the spend ceiling.
    fn limit_by_balance(&self, available: i64) -> i64 {
        let most = self.most.max(0);
        if self.fixed || self.per_token <= 0.0 {
            return most;
        }
        let covered = self.covered(available);
        if covered >= most {
            most
        } else {
            covered
                .min(self.lowered_cap.max(0))
                .max(self.least.min(most))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(most: i64, least: i64) -> OutputAsk {
        OutputAsk {
            prompt_units: 100,
            per_token: 2.0,
            most,
            least,
            lowered_cap: most,
            fixed: false,
            max_units: None,
        }
    }

    #[test]
    fn the_limit_is_what_the_balance_covers() {
        let a = ask(100_000, 4096);
        assert_eq!(a.needed(), 100 + 8192);
        // (10,100 − 100) ÷ 2 = 5,000 tokens.
        assert_eq!(a.limit(10_100), 5_000);
        assert_eq!(a.units(a.limit(10_100)), 10_100);
        // Enough for everything: the most.
        assert_eq!(a.limit(1_000_000), 100_000);
        // A model without a known maximum: a lowered limit is capped.
        let capped = OutputAsk {
            lowered_cap: 32_768,
            ..ask(1_000_000, 4096)
        };
        assert_eq!(capped.limit(1_000_000), 32_768);
        assert_eq!(capped.limit(3_000_000), 1_000_000);
        // Fixed: the most, and all of it needed.
        let fixed = OutputAsk {
            fixed: true,
            ..ask(100_000, 4096)
        };
        assert_eq!((fixed.limit(10), fixed.needed()), (100_000, 200_100));
    }

    #[test]
    fn a_spend_ceiling_lowers_the_limit_and_what_is_needed() {
        // 1,100 units: 500 output tokens beyond the prompt's 100.
        let a = OutputAsk {
            max_units: Some(1_100),
            ..ask(100_000, 4096)
        };
        assert_eq!(a.limit(1_000_000), 500);
        assert_eq!(
            a.needed(),
            1_100,
            "only what the ceiling allows must be covered"
        );
        // The balance may still be what limits.
        let b = OutputAsk {
            max_units: Some(100_000),
            ..ask(100_000, 1_000)
        };
        assert_eq!((b.needed(), b.limit(10_100)), (2_100, 5_000));
        // A ceiling at the prompt alone still allows one token.
        let bare = OutputAsk {
            max_units: Some(100),
            ..ask(100_000, 4096)
        };
        assert_eq!(bare.limit(1_000_000), 1);
        // A body that cannot change keeps its limit.
        let fixed = OutputAsk {
            fixed: true,
            max_units: Some(1_100),
            ..ask(100_000, 4096)
        };
        assert_eq!(fixed.limit(10), 100_000);
    }
}
