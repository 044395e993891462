//! The public model pricing list (spec 02 §3 "Pricing model", §9) and restoring the built-in
//! price tables.
//!
//! Every model some enabled channel serves is listed, with how it is billed: `quota_type` 0 by
//! tokens (model ratio, completion ratio) or 1 per call (model price, which wins when both are
//! set, as in the relay). A served model with neither is listed with `price_set: false` and zero
//! prices: the relay refuses it unless the user accepts unpriced models.
//!
//! The price options hold the admin's overrides on top of the built-in table
//! (`tollgate_actors::options::pricing`), so restoring the defaults clears the four options.

use std::collections::BTreeMap;

use serde::Serialize;
use tollgate_actors::options::catalog;
use tollgate_storage::users::User;

use super::audit::Auditor;
use super::personal::usable_groups;
use crate::error::ConsoleError;
use crate::state::AppState;

/// The options that hold price overrides, cleared by [`restore_defaults`].
pub const PRICE_OPTIONS: [&str; 4] = ["ModelRatio", "CompletionRatio", "CacheRatio", "ModelPrice"];

/// The component price tables (P16 item 2): each stored text is the whole table, so restoring
/// the defaults writes the seeded table back rather than an empty override.
const COMPONENT_PRICE_OPTIONS: [&str; 4] = [
    "AudioRatio",
    "AudioCompletionRatio",
    "ToolCallPrice",
    "ModelPriceTiers",
];

/// One row of the pricing list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PricingModel {
    /// Model name as clients send it.
    pub model_name: String,
    /// 0 billed by tokens, 1 per call.
    pub quota_type: i32,
    /// Prompt-token ratio (0 when not set).
    pub model_ratio: f64,
    /// Completion tokens cost this many prompt tokens.
    pub completion_ratio: f64,
    /// US$ per call (0 when billed by tokens).
    pub model_price: f64,
    /// Groups in which some enabled channel serves the model.
    pub enable_groups: Vec<String>,
    /// The admin's description (ModelDescriptions), empty when none.
    pub model_description: String,
    /// Whether the model has a price at all.
    pub price_set: bool,
}

/// GET /api/pricing's answer (new-api's shape: the extra maps beside `data`).
#[derive(Debug, Serialize)]
pub struct PricingList {
    /// Always true.
    pub success: bool,
    /// Empty.
    pub message: String,
    /// The rows, by model name.
    pub data: Vec<PricingModel>,
    /// Group → ratio (GroupRatio).
    pub group_ratio: BTreeMap<String, f64>,
    /// Group → description: the groups the caller may use (UserUsableGroups for guests).
    pub usable_group: BTreeMap<String, String>,
}

/// Builds the pricing list for `user` (a guest when `None`).
pub fn list(state: &AppState, user: Option<&User>) -> PricingList {
    let options = state.options.current();
    let prices = options.prices();
    let descriptions: BTreeMap<String, String> =
        serde_json::from_str(options.text("ModelDescriptions")).unwrap_or_default();
    let table = state.channel_pool.table().load();
    let data = table
        .model_groups()
        .into_iter()
        .map(|(model, groups)| {
            let ratio = prices.model_ratio(model);
            let price = prices.model_price(model);
            PricingModel {
                model_name: model.to_owned(),
                quota_type: i32::from(price.is_some()),
                model_ratio: ratio.unwrap_or(0.0),
                completion_ratio: prices.completion_ratio(model),
                model_price: price.unwrap_or(0.0),
                enable_groups: groups.into_iter().map(str::to_owned).collect(),
                model_description: descriptions.get(model).cloned().unwrap_or_default(),
                price_set: ratio.is_some() || price.is_some(),
            }
        })
        .collect();
    let group_ratio: BTreeMap<String, f64> = prices
        .group_ratios()
        .iter()
        .map(|(g, r)| (g.clone(), *r))
        .collect();
    let usable_group = match user {
        Some(user) => usable_groups(state, user)
            .into_iter()
            .map(|(name, info)| (name, info.desc))
            .collect(),
        None => serde_json::from_str(options.text("UserUsableGroups")).unwrap_or_default(),
    };
    PricingList {
        success: true,
        message: String::new(),
        data,
        group_ratio,
        usable_group,
    }
}

/// POST /api/option/rest_model_ratio: drops the admin's price overrides and writes the seeded
/// component price tables back, so the built-in tables apply again (to the relay from the next request); audited (`pricing.reset`, every price
/// option before and after) in the same transaction.
pub async fn restore_defaults(state: &AppState, auditor: &Auditor) -> Result<(), ConsoleError> {
    let seeded = COMPONENT_PRICE_OPTIONS
        .iter()
        .filter_map(|k| catalog::find(k).map(|def| (*k, def.default)));
    let entries: Vec<(&str, &str)> = PRICE_OPTIONS
        .iter()
        .map(|k| (*k, "{}"))
        .chain(seeded)
        .collect();
    let entry = auditor.entry(
        "pricing.reset",
        "option:prices".to_owned(),
        &serde_json::Value::Null,
        &serde_json::Value::Null,
    );
    state.options.update_many(&entries, entry).await?;
    Ok(())
}
