//! What a task costs: its priced model's per-call price (ModelPrice, US$ per call; for videos
//! per second) × calls × the group's ratio × QuotaPerUnit; a model priced only by ratio costs,
//! as the incumbent pre-charges task models, ratio / 2 × QuotaPerUnit × group × calls. A model
//! with neither is refused, unless SelfUseModeEnabled or the user's AcceptUnsetRatioModel lets
//! it through — then it costs nothing (it is never billed at DefaultModelRatio, which prices
//! tokens a task does not have).

use tollgate_actors::options::OptionsSnapshot;
use tollgate_actors::options::pricing::ModelPricing;

use crate::error::RelayError;
use crate::relay::measure::price;

/// How a task is priced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TaskPrice {
    /// US$ per call (or per second), `None` when priced by ratio or not at all.
    pub model_price: Option<f64>,
    /// The model ratio when priced by ratio.
    pub model_ratio: Option<f64>,
    /// The billing group's ratio.
    pub group_ratio: f64,
    /// QuotaPerUnit.
    pub quota_per_unit: i64,
    /// Admitted without a price (self-use, accept-unset): charged nothing.
    pub unset: bool,
}

impl TaskPrice {
    /// The price of `model` for `group`, or the refusal of an unpriced model when `accept_unset`
    /// (SelfUseModeEnabled or the user's setting) is false.
    pub fn of(
        options: &OptionsSnapshot,
        model: &str,
        group: &str,
        accept_unset: bool,
    ) -> Result<TaskPrice, RelayError> {
        let prices = options.prices();
        let group_ratio = prices.group(group);
        let quota_per_unit = options.int("QuotaPerUnit");
        let base = TaskPrice {
            model_price: None,
            model_ratio: None,
            group_ratio,
            quota_per_unit,
            unset: false,
        };
        match prices.model(model) {
            Some(ModelPricing::PerCall { price }) => Ok(TaskPrice {
                model_price: Some(price),
                ..base
            }),
            Some(ModelPricing::Ratio { model: ratio, .. }) => Ok(TaskPrice {
                model_ratio: Some(ratio),
                ..base
            }),
            None if accept_unset || options.flag("SelfUseModeEnabled") => Ok(TaskPrice {
                unset: true,
                ..base
            }),
            None => Err(RelayError::ModelUnpriced(model.to_owned())),
        }
    }

    /// The quota `calls` calls (or seconds) cost; an amount that is not a finite quota is the
    /// client's to lower (400). The same arithmetic as admission's reservation of a per-call
    /// request ([`price::per_call`], [`price::charge`]), so what is reserved is what is settled.
    pub fn quota(&self, calls: f64) -> Result<i64, RelayError> {
        let pricing = match (self.model_price, self.model_ratio) {
            (Some(price), _) => ModelPricing::PerCall { price },
            (None, Some(model)) => ModelPricing::Ratio {
                model,
                completion: 1.0,
                cache: 1.0,
            },
            (None, None) => return Ok(0),
        };
        price::charge(
            price::per_call(pricing, calls),
            self.group_ratio,
            self.quota_per_unit,
            price::Usage::default(),
        )
        .map_err(|_| {
            RelayError::BadRequest("the task's price cannot be computed for this request".into())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn price(model_price: Option<f64>, model_ratio: Option<f64>, unset: bool) -> TaskPrice {
        TaskPrice {
            model_price,
            model_ratio,
            group_ratio: 1.5,
            quota_per_unit: 500_000,
            unset,
        }
    }

    #[test]
    fn per_call_per_second_ratio_and_unset_prices() {
        assert_eq!(price(Some(0.1), None, false).quota(1.0).expect("q"), 75_000);
        assert_eq!(
            price(Some(0.3), None, false).quota(8.0).expect("q"),
            1_800_000
        );
        assert_eq!(
            price(None, Some(2.0), false).quota(1.0).expect("q"),
            750_000
        );
        assert_eq!(price(None, None, true).quota(1.0).expect("q"), 0);
        assert!(price(Some(f64::MAX), None, false).quota(10.0).is_err());
    }
}
