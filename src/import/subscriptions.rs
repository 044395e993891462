//! Quota the incumbent holds outside `users.quota`: its subscriptions. Tollgate has no
//! subscriptions, so each active one is listed per user with what is left of it, for the
//! operator to credit (a top-up, a redemption code or a budget) as they see fit.
//!
//! | table | model (file, commit read) | read |
//! |---|---|---|
//! | `subscription_plans` | `SubscriptionPlan`, model/subscription.go @697cbbf | id, title |
//! | `user_subscriptions` | `UserSubscription`, same file | id, user_id, plan_id, end_time, status (`active` / `expired` / `cancelled`) |
//! | `user_subscription_items` | `UserSubscriptionItem`, same file | user_subscription_id, model_name, quota_type (0: quota units, 1: requests), amount_total, amount_used |
//!
//! A subscription is active as the incumbent decides it: status `active` and `end_time` after
//! now (`GetAllActiveUserSubscriptions`).

use std::collections::{BTreeMap, HashMap};

use super::mapping::Notes;
use super::source::{Kind, SourceTable, TableSpec};

use Kind::{Int, Text};

/// `subscription_plans`.
pub const PLANS: TableSpec = TableSpec {
    name: "subscription_plans",
    columns: &[("id", Int), ("title", Text)],
    not_carried: &[
        "subtitle",
        "price_amount",
        "currency",
        "duration_unit",
        "duration_value",
        "custom_seconds",
        "enabled",
        "sort_order",
        "stripe_price_id",
        "creem_product_id",
        "created_at",
        "updated_at",
    ],
};

/// `user_subscriptions`.
pub const SUBSCRIPTIONS: TableSpec = TableSpec {
    name: "user_subscriptions",
    columns: &[
        ("id", Int),
        ("user_id", Int),
        ("plan_id", Int),
        ("end_time", Int),
        ("status", Text),
    ],
    not_carried: &["start_time", "source", "created_at", "updated_at"],
};

/// `user_subscription_items`.
pub const ITEMS: TableSpec = TableSpec {
    name: "user_subscription_items",
    columns: &[
        ("user_subscription_id", Int),
        ("model_name", Text),
        ("quota_type", Int),
        ("amount_total", Int),
        ("amount_used", Int),
    ],
    not_carried: &["id"],
};

/// The report's topic.
pub const TOPIC: &str = "subscriptions not carried (quota held outside users.quota: credit what \
     is left as you see fit)";

/// Lists each active subscription per user with what is left of each of its items.
pub fn list(
    plans: &SourceTable,
    subscriptions: &SourceTable,
    items: &SourceTable,
    now: i64,
    notes: &mut Notes,
) {
    let titles: HashMap<i64, String> = plans
        .rows
        .iter()
        .map(|r| (r.int("id"), r.text("title")))
        .collect();
    let mut left: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for item in &items.rows {
        let remaining = item
            .int("amount_total")
            .saturating_sub(item.int("amount_used"))
            .max(0);
        let unit = if item.int("quota_type") == 1 {
            "requests"
        } else {
            "quota"
        };
        left.entry(item.int("user_subscription_id"))
            .or_default()
            .push(format!(
                "{} {remaining} {unit} left",
                item.text("model_name")
            ));
    }
    let mut active: Vec<_> = subscriptions
        .rows
        .iter()
        .filter(|s| s.text("status") == "active" && s.int("end_time") > now)
        .collect();
    active.sort_by_key(|s| (s.int("user_id"), s.int("id")));
    for sub in active {
        let id = sub.int("id");
        let plan = sub.int("plan_id");
        let items = left.remove(&id).unwrap_or_default();
        notes.add(
            TOPIC,
            format!(
                "user {}: subscription {id} ({}) until unix {}: {}",
                sub.int("user_id"),
                titles
                    .get(&plan)
                    .cloned()
                    .unwrap_or_else(|| format!("plan {plan}")),
                sub.int("end_time"),
                if items.is_empty() {
                    "no items".to_owned()
                } else {
                    items.join(", ")
                }
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::source::{SourceRow, Value};
    use super::*;

    fn table(rows: Vec<SourceRow>) -> SourceTable {
        SourceTable {
            present: true,
            rows,
            ..SourceTable::default()
        }
    }

    #[test]
    fn only_active_subscriptions_are_listed_with_what_is_left() {
        let t = |s: &str| Value::Text(s.to_owned());
        let plans = table(vec![
            SourceRow::new()
                .with("id", Value::Int(1))
                .with("title", t("Pro")),
        ]);
        let sub = |id: i64, status: &str, end: i64| {
            SourceRow::new()
                .with("id", Value::Int(id))
                .with("user_id", Value::Int(2))
                .with("plan_id", Value::Int(1))
                .with("status", t(status))
                .with("end_time", Value::Int(end))
        };
        let subs = table(vec![
            sub(1, "active", 200),
            sub(2, "active", 50),
            sub(3, "cancelled", 200),
        ]);
        let item = |quota_type: i64, total: i64, used: i64| {
            SourceRow::new()
                .with("user_subscription_id", Value::Int(1))
                .with("model_name", t("gpt-4o"))
                .with("quota_type", Value::Int(quota_type))
                .with("amount_total", Value::Int(total))
                .with("amount_used", Value::Int(used))
        };
        let items = table(vec![item(0, 1000, 250), item(1, 10, 4)]);
        let mut notes = Notes::default();
        list(&plans, &subs, &items, 100, &mut notes);
        let lines = &notes.items[TOPIC];
        assert_eq!(
            lines,
            &vec![
                "user 2: subscription 1 (Pro) until unix 200: gpt-4o 750 quota left, gpt-4o 6 \
                 requests left"
                    .to_owned()
            ]
        );
    }
}
