//! How the incumbent's rows become Tollgate's records. Pure functions over [`SourceRow`]s.
//!
//! The incumbent's schema is read from its GORM models, QuantumNous/new-api (table names are
//! GORM's plural snake case of the struct names):
//!
//! | table | model (file, commit read) | Tollgate |
//! |---|---|---|
//! | `users` | `User`, model/user.go @0089a12 | [`User`]: id, username, display_name, role, status, email, group (`"group"` quoted), quota, used_quota, request_count, aff_code, aff_count, aff_quota, `aff_history` → aff_history_quota, inviter_id, setting (JSON text), created_at; `password` (bcrypt) kept as it is and upgraded to argon2id at the first sign-in; `access_token` (plain char(32)) → its SHA-256; `github_id` numeric → bound, a login (stored before new-api's commit 424595e62) → a pending binding `login:<login>`, claimed at the first GitHub sign-in of an account created before the import, and listed; wechat_id, telegram_id, linux_do_id bound; `oidc_id` (the subject, `sub`, of new-api's OIDC sign-in: controller/oidc.go) → bound as `<issuer> <subject>` with the issuer of the imported `oidc.well_known` ([`oidc_issuer`]), listed when there is none; `discord_id` listed; soft-deleted (`deleted_at` set) → deleted |
//! | `tokens` | `Token`, model/token.go @0067bd9 | [`Token`]: id, user_id, `key` (quoted; stored without `sk-`) byte for byte, status, name, created_time, accessed_time, expired_time (-1 = never), remain_quota, unlimited_quota, model_limits_enabled, model_limits, allow_ips (an unreadable list disables the token: the incumbent never matched it), used_quota, group; soft-deleted tokens are not carried (they no longer authenticate there) |
//! | `channels` | `Channel` + `ChannelInfo`, model/channel.go @0102ffa | [`Channel`]: id, type, key (multi-key: one per line; a JSON array one element per line), openai_organization, test_model, status, name, weight, created_time, test_time, response_time, base_url, other, balance, balance_updated_time, models, group, used_quota, model_mapping, status_code_mapping, priority, auto_ban, other_info, tag, setting (its `proxy` → proxy), param_override; `channel_info.multi_key_status_list` → the disabled keys of `other_info`; header_override, remark, settings listed when set; a type Tollgate has no adaptor for → imported disabled and listed |
//! | `options` | `Option` (`key` PK, `value`), model/option.go @014c3ef | each through the option catalog's validation ([`tollgate_actors::options::catalog::normalize`], as a console save); refused and unknown keys listed |
//! | `redemptions` | `Redemption`, model/redemption.go @03f1ecc | [`Redemption`]: id, name, key (quoted), status (1 unused, 2 disabled, 3 used), quota, created_time, redeemed_time, used_user_id; an unused code past its `expired_time` → disabled; soft-deleted not carried |
//! | `top_ups` | `TopUp`, model/topup.go @0089a12 | [`TopUp`]: id, user_id, amount, quota = amount × QuotaPerUnit, money → cents, trade_no, payment_method, status, create_time, complete_time; a pending order of another provider than Epay is listed (only Epay notifies Tollgate) |
//! | `two_fas` | `TwoFA`, model/twofa.go @0417e0b | [`TwoFactor`]: user_id, secret (base32, sealed), is_enabled |
//! | `two_fa_backup_codes` | `TwoFABackupCode`, model/twofa.go @0417e0b | bcrypt-hashed: Tollgate keeps SHA-256 digests, so they cannot be carried; the unused ones are counted per user in the report |
//! | `passkey_credentials` | `PasskeyCredential`, model/passkey.go @2499e4f | bound to the incumbent's origin: counted per user in the report (registered again), not carried |
//! | `midjourneys`, `tasks` | model/midjourney.go @515769c, model/task.go @01d7dcf | Tollgate's tasks: see [`super::tasks`] |
//! | `user_subscriptions` (+ items, plans) | model/subscription.go @697cbbf | listed per user with what is left: see [`super::subscriptions`] |
//! | `logs` | `Log`, model/log.go @0042344 | with `--with-logs`: [`LogEntry`] (type, content, username, token, model, quota, tokens, use_time, is_stream, `channel_id`, group, other with `imported: true`); `ip` not carried |
//!
//! one-api (songquanpeng/one-api, last release v0.6.10, model/token.go and model/channel.go)
//! is told apart by its columns: its tokens have `models` and `subnet` instead of
//! `model_limits(_enabled)` and `allow_ips`, and its users no `setting`. Missing columns take
//! the models' defaults; columns of neither are reported by name.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value as Json, json};
use sha2::{Digest, Sha256};
use tollgate_storage::channels::other_info::{DisabledKey, fingerprint};
use tollgate_storage::channels::{self, Channel};
use tollgate_storage::logs::{LOG_SYSTEM, LogEntry};
use tollgate_storage::redemptions::{self, Redemption};
use tollgate_storage::secret::Secret;
use tollgate_storage::tokens::{self, Token};
use tollgate_storage::topups::TopUp;
use tollgate_storage::two_factor::TwoFactor;
use tollgate_storage::users::User;
use tollgate_storage::{ChannelId, Quota, RedemptionId, TokenId, TopUpId, UserId};

use super::source::{Kind, SourceRow, SourceTable, TableSpec};
use crate::channel_types;

/// Which incumbent the source is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// QuantumNous/new-api.
    NewApi,
    /// songquanpeng/one-api.
    OneApi,
}

impl Variant {
    /// The name in the report and the audit row.
    pub fn name(self) -> &'static str {
        match self {
            Variant::NewApi => "new-api",
            Variant::OneApi => "one-api",
        }
    }
}

use Kind::{Flag, Float, Int, Text};

/// `users` (model/user.go).
pub const USERS: TableSpec = TableSpec {
    name: "users",
    columns: &[
        ("id", Int),
        ("username", Text),
        ("password", Text),
        ("display_name", Text),
        ("role", Int),
        ("status", Int),
        ("email", Text),
        ("github_id", Text),
        ("discord_id", Text),
        ("oidc_id", Text),
        ("wechat_id", Text),
        ("telegram_id", Text),
        ("linux_do_id", Text),
        ("access_token", Text),
        ("quota", Int),
        ("used_quota", Int),
        ("request_count", Int),
        ("group", Text),
        ("aff_code", Text),
        ("aff_count", Int),
        ("aff_quota", Int),
        ("aff_history", Int),
        ("inviter_id", Int),
        ("setting", Text),
        ("created_at", Int),
        ("deleted_at", Text),
    ],
    not_carried: &[
        "remark",
        "stripe_customer",
        "last_login_at",
        "auth_version",
        "invite_rebate_eligible",
    ],
};

/// `tokens` (model/token.go; one-api: `models`, `subnet`).
pub const TOKENS: TableSpec = TableSpec {
    name: "tokens",
    columns: &[
        ("id", Int),
        ("user_id", Int),
        ("key", Text),
        ("status", Int),
        ("name", Text),
        ("created_time", Int),
        ("accessed_time", Int),
        ("expired_time", Int),
        ("remain_quota", Int),
        ("unlimited_quota", Flag),
        ("model_limits_enabled", Flag),
        ("model_limits", Text),
        ("allow_ips", Text),
        ("used_quota", Int),
        ("group", Text),
        ("models", Text),
        ("subnet", Text),
        ("deleted_at", Text),
    ],
    not_carried: &["cross_group_retry", "billing_type"],
};

/// `channels` (model/channel.go).
pub const CHANNELS: TableSpec = TableSpec {
    name: "channels",
    columns: &[
        ("id", Int),
        ("type", Int),
        ("key", Text),
        ("openai_organization", Text),
        ("test_model", Text),
        ("status", Int),
        ("name", Text),
        ("weight", Int),
        ("created_time", Int),
        ("test_time", Int),
        ("response_time", Int),
        ("base_url", Text),
        ("other", Text),
        ("balance", Float),
        ("balance_updated_time", Int),
        ("models", Text),
        ("group", Text),
        ("used_quota", Int),
        ("model_mapping", Text),
        ("status_code_mapping", Text),
        ("priority", Int),
        ("auto_ban", Int),
        ("other_info", Text),
        ("tag", Text),
        ("setting", Text),
        ("param_override", Text),
        ("header_override", Text),
        ("remark", Text),
        ("channel_info", Text),
        ("settings", Text),
        ("config", Text),
    ],
    not_carried: &["need_reconcile", "system_prompt"],
};

/// `options` (model/option.go).
pub const OPTIONS: TableSpec = TableSpec {
    name: "options",
    columns: &[("key", Text), ("value", Text)],
    not_carried: &[],
};

/// `redemptions` (model/redemption.go).
pub const REDEMPTIONS: TableSpec = TableSpec {
    name: "redemptions",
    columns: &[
        ("id", Int),
        ("user_id", Int),
        ("key", Text),
        ("status", Int),
        ("name", Text),
        ("quota", Int),
        ("created_time", Int),
        ("redeemed_time", Int),
        ("used_user_id", Int),
        ("expired_time", Int),
        ("deleted_at", Text),
    ],
    not_carried: &[],
};

/// `top_ups` (model/topup.go).
pub const TOP_UPS: TableSpec = TableSpec {
    name: "top_ups",
    columns: &[
        ("id", Int),
        ("user_id", Int),
        ("amount", Int),
        ("money", Float),
        ("trade_no", Text),
        ("payment_method", Text),
        ("payment_provider", Text),
        ("create_time", Int),
        ("complete_time", Int),
        ("status", Text),
    ],
    not_carried: &[],
};

/// `two_fas` (model/twofa.go).
pub const TWO_FAS: TableSpec = TableSpec {
    name: "two_fas",
    columns: &[
        ("user_id", Int),
        ("secret", Text),
        ("is_enabled", Flag),
        ("deleted_at", Text),
    ],
    not_carried: &[
        "id",
        "failed_attempts",
        "locked_until",
        "last_used_at",
        "created_at",
        "updated_at",
    ],
};

/// `two_fa_backup_codes` (model/twofa.go).
pub const BACKUP_CODES: TableSpec = TableSpec {
    name: "two_fa_backup_codes",
    columns: &[("user_id", Int), ("is_used", Flag), ("deleted_at", Text)],
    not_carried: &["id", "code_hash", "used_at", "created_at"],
};

/// `passkey_credentials` (`PasskeyCredential`, model/passkey.go @2499e4f): WebAuthn credentials
/// are bound to the incumbent's origin and relying-party id, so they are counted per user in
/// the report (the user registers the passkey again), never carried.
pub const PASSKEYS: TableSpec = TableSpec {
    name: "passkey_credentials",
    columns: &[("user_id", Int), ("deleted_at", Text)],
    not_carried: &[
        "id",
        "credential_id",
        "public_key",
        "attestation_type",
        "aaguid",
        "sign_count",
        "clone_warning",
        "user_present",
        "user_verified",
        "backup_eligible",
        "backup_state",
        "transports",
        "attachment",
        "last_used_at",
        "created_at",
        "updated_at",
    ],
};

/// `logs` (model/log.go).
pub const LOGS: TableSpec = TableSpec {
    name: "logs",
    columns: &[
        ("id", Int),
        ("user_id", Int),
        ("created_at", Int),
        ("type", Int),
        ("content", Text),
        ("username", Text),
        ("token_name", Text),
        ("model_name", Text),
        ("quota", Int),
        ("prompt_tokens", Int),
        ("completion_tokens", Int),
        ("use_time", Int),
        ("is_stream", Flag),
        ("channel_id", Int),
        ("token_id", Int),
        ("group", Text),
        ("other", Text),
        ("request_id", Text),
    ],
    not_carried: &["ip", "upstream_request_id"],
};

/// What the report lists: things not carried, changed or needing the operator.
#[derive(Debug, Default)]
pub struct Notes {
    /// Per topic, one line per item.
    pub items: BTreeMap<&'static str, Vec<String>>,
}

impl Notes {
    /// Adds a line under `topic`.
    pub fn add(&mut self, topic: &'static str, line: String) {
        self.items.entry(topic).or_default().push(line);
    }
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Valid JSON text, or "" (with a note) when `text` is not JSON.
fn json_text(text: &str, what: &str, notes: &mut Notes) -> String {
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed == "null" {
        return String::new();
    }
    if serde_json::from_str::<Json>(trimmed).is_ok() {
        trimmed.to_owned()
    } else {
        notes.add("values dropped (not JSON)", what.to_owned());
        String::new()
    }
}

/// Reads the variant from the tables' columns: one-api's tokens lack `model_limits_enabled` and
/// its users `setting`.
pub fn variant(tokens: &SourceTable, users: &SourceTable) -> Variant {
    if tokens.missing.contains(&"model_limits_enabled") && users.missing.contains(&"setting") {
        Variant::OneApi
    } else {
        Variant::NewApi
    }
}

/// The issuer of the OIDC provider whose discovery document is at `well_known`: OpenID Connect
/// Discovery 1.0 §4 has the document at `<issuer>/.well-known/openid-configuration`, and its
/// `issuer` identical to that prefix (§4.3), so the issuer is the address without the suffix.
/// `None` for an address of another form (the operator binds those users again).
pub fn oidc_issuer(well_known: &str) -> Option<String> {
    let issuer = well_known
        .trim()
        .strip_suffix("/.well-known/openid-configuration")?;
    (issuer.starts_with("https://") || issuer.starts_with("http://")).then(|| issuer.to_owned())
}

/// A user and the quota ever credited to it (balance + used); `oidc_issuer` is the issuer of
/// the imported OIDC configuration ([`oidc_issuer`]), which new-api's `oidc_id` subjects are of.
pub fn user(
    row: &SourceRow,
    now: i64,
    oidc_issuer: Option<&str>,
    notes: &mut Notes,
) -> Result<(User, i64), String> {
    let id = row.int("id");
    let quota = row.int("quota");
    let used = row.int("used_quota");
    let credited = quota
        .checked_add(used)
        .ok_or_else(|| format!("user {id}: quota + used quota overflows"))?;
    let username = row.text("username");
    let github = row.text("github_id");
    let github_id = if github.is_empty() || github.bytes().all(|b| b.is_ascii_digit()) {
        github
    } else {
        notes.add(
            "GitHub bindings pending (a login, not GitHub's numeric id: bound at the first GitHub \
             sign-in with that login of an account created before the import)",
            format!("user {id} ({username}): {github}"),
        );
        format!("{}{github}", tollgate_storage::import::PENDING_LOGIN)
    };
    let subject = row.text("oidc_id").trim().to_owned();
    let oidc_id = match oidc_issuer {
        _ if subject.is_empty() => String::new(),
        Some(issuer) => format!("{issuer} {subject}"),
        None => {
            notes.add(
                "third-party bindings not carried",
                format!(
                    "user {id} ({username}): OIDC (no oidc.well_known of the form \
                     <issuer>/.well-known/openid-configuration to take the issuer from)"
                ),
            );
            String::new()
        }
    };
    if !row.text("discord_id").is_empty() {
        notes.add(
            "third-party bindings not carried",
            format!("user {id} ({username}): Discord"),
        );
    }
    let access = row.text("access_token");
    let group = match row.text("group") {
        g if g.trim().is_empty() => "default".to_owned(),
        g => g,
    };
    let created = row.int("created_at");
    let user = User {
        id: UserId(id),
        display_name: row.text("display_name"),
        password_hash: row.text("password"),
        email: row.text("email").trim().to_owned(),
        github_id,
        oidc_id,
        wechat_id: row.text("wechat_id"),
        telegram_id: row.text("telegram_id"),
        linux_do_id: row.text("linux_do_id"),
        group,
        quota: Quota(quota),
        used_quota: Quota(used),
        request_count: row.int("request_count"),
        aff_code: row.text("aff_code"),
        aff_count: row.int("aff_count"),
        aff_quota: Quota(row.int("aff_quota")),
        aff_history_quota: Quota(row.int("aff_history")),
        inviter_id: row.int("inviter_id"),
        role: row.int_or("role", 1) as i32,
        status: row.int_or("status", 1) as i32,
        access_token_hash: (!access.trim().is_empty()).then(|| sha256_hex(access.trim())),
        setting: json_text(&row.text("setting"), &format!("user {id} setting"), notes),
        created_at: if created > 0 { created } else { now },
        deleted_at: (!row.is_null("deleted_at")).then_some(now),
        username,
    };
    Ok((user, credited))
}

/// Drops an email a user shares with another (Tollgate's emails are unique): a deleted user's
/// first, else the later id's. The incumbent's index on email is not unique.
pub fn dedupe_emails(users: &mut [(User, i64)], notes: &mut Notes) {
    let mut owner: HashMap<String, usize> = HashMap::new();
    // Live users claim first, in id order; deleted ones after.
    let mut order: Vec<usize> = (0..users.len()).collect();
    order.sort_by_key(|&i| (users[i].0.deleted_at.is_some(), users[i].0.id));
    for i in order {
        let key = users[i].0.email.to_lowercase();
        if key.is_empty() {
            continue;
        }
        if let Some(&first) = owner.get(&key) {
            let first_id = users[first].0.id;
            let user = &mut users[i].0;
            notes.add(
                "emails dropped (shared with another user)",
                format!(
                    "user {} ({}): shared with user {first_id}",
                    user.id, user.username
                ),
            );
            user.email.clear();
        } else {
            owner.insert(key, i);
        }
    }
}

/// A token, or `None` for a soft-deleted one.
pub fn token(row: &SourceRow, variant: Variant, notes: &mut Notes) -> Option<Token> {
    let id = row.int("id");
    if !row.is_null("deleted_at") {
        notes.add("deleted tokens not carried", format!("token {id}"));
        return None;
    }
    let (model_limits_enabled, model_limits, allow_ips) = match variant {
        Variant::NewApi => (
            row.flag("model_limits_enabled"),
            row.text("model_limits"),
            row.text("allow_ips"),
        ),
        Variant::OneApi => {
            let models = row.text("models");
            (!models.trim().is_empty(), models, row.text("subnet"))
        }
    };
    let mut status = row.int_or("status", 1) as i32;
    if tollgate_actors::token_index::parse_allow_ips(&allow_ips).is_err() {
        notes.add(
            "tokens disabled (an allowed-IP list Tollgate cannot read)",
            format!("token {id} ({})", row.text("name")),
        );
        status = tokens::STATUS_DISABLED;
    }
    let key = row.text("key");
    let key = key.strip_prefix("sk-").unwrap_or(&key).to_owned();
    Some(Token {
        id: TokenId(id),
        user_id: UserId(row.int("user_id")),
        name: row.text("name"),
        key,
        status,
        created_time: row.int("created_time"),
        accessed_time: row.int("accessed_time"),
        expired_time: row.int_or("expired_time", -1),
        remain_quota: Quota(row.int("remain_quota")),
        unlimited_quota: row.flag("unlimited_quota"),
        used_quota: Quota(row.int("used_quota")),
        model_limits_enabled,
        model_limits,
        allow_ips,
        group: row.text("group"),
    })
}

/// The key lines of a channel: a JSON array (the incumbent's multi-key form for JSON keys)
/// becomes one compact element per line, anything else is kept as it is.
fn channel_key(key: &str) -> String {
    let trimmed = key.trim();
    if trimmed.starts_with('[')
        && let Ok(items) = serde_json::from_str::<Vec<Json>>(trimmed)
    {
        return items
            .iter()
            .map(|v| match v {
                Json::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n");
    }
    key.trim_matches('\n').to_owned()
}

/// The disabled keys of a multi-key channel, from `channel_info`, merged into `other_info`.
fn other_info_with_disabled(other_info: &str, channel_info: &str, key: &str) -> String {
    let info: Json = serde_json::from_str(channel_info).unwrap_or(Json::Null);
    let Some(statuses) = info.get("multi_key_status_list").and_then(Json::as_object) else {
        return other_info.to_owned();
    };
    let lines: Vec<&str> = key
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let mut disabled = Vec::new();
    for (index, status) in statuses {
        let (Ok(index), Some(status)) = (index.parse::<usize>(), status.as_i64()) else {
            continue;
        };
        if status == i64::from(channels::STATUS_ENABLED) {
            continue;
        }
        let Some(line) = lines.get(index) else {
            continue;
        };
        let field = |name: &str| info.get(name).and_then(|m| m.get(index.to_string()));
        disabled.push(DisabledKey {
            index,
            fingerprint: fingerprint(line),
            reason: field("multi_key_disabled_reason")
                .and_then(Json::as_str)
                .unwrap_or("disabled in new-api")
                .to_owned(),
            time: field("multi_key_disabled_time")
                .and_then(Json::as_i64)
                .unwrap_or(0),
        });
    }
    if disabled.is_empty() {
        return other_info.to_owned();
    }
    disabled.sort_by_key(|d| d.index);
    let mut map: serde_json::Map<String, Json> =
        serde_json::from_str(other_info).unwrap_or_default();
    map.insert("disabled_keys".into(), json!(disabled));
    Json::Object(map).to_string()
}

/// A channel.
pub fn channel(row: &SourceRow, notes: &mut Notes) -> Channel {
    let id = row.int("id");
    let name = row.text("name");
    let channel_type = row.int("type") as i32;
    let key = channel_key(&row.text("key"));
    let setting = json_text(
        &row.text("setting"),
        &format!("channel {id} setting"),
        notes,
    );
    let mut status = row.int_or("status", 1) as i32;
    if channel_types::family(channel_type).is_none() {
        notes.add(
            "channels imported disabled (a type Tollgate does not relay)",
            format!("channel {id} ({name}): type {channel_type}"),
        );
        status = channels::STATUS_MANUALLY_DISABLED;
    }
    for column in ["header_override", "remark", "settings", "config"] {
        let value = row.text(column);
        let value = value.trim();
        if !value.is_empty() && value != "{}" && value != "null" {
            notes.add(
                "channel fields not carried",
                format!("channel {id} ({name}): {column}"),
            );
        }
    }
    let other_info = other_info_with_disabled(
        &json_text(
            &row.text("other_info"),
            &format!("channel {id} other_info"),
            notes,
        ),
        &row.text("channel_info"),
        &key,
    );
    Channel {
        id: ChannelId(id),
        name,
        channel_type,
        proxy: channel_types::setting_value(&setting, "proxy").unwrap_or_default(),
        key: Secret::new(key),
        openai_organization: row.text("openai_organization"),
        max_input_tokens: 0,
        base_url: row.text("base_url").trim().trim_end_matches('/').to_owned(),
        other: row.text("other"),
        model_mapping: json_text(
            &row.text("model_mapping"),
            &format!("channel {id} model_mapping"),
            notes,
        ),
        status_code_mapping: json_text(
            &row.text("status_code_mapping"),
            &format!("channel {id} status_code_mapping"),
            notes,
        ),
        models: row.text("models"),
        group: match row.text("group") {
            g if g.trim().is_empty() => "default".to_owned(),
            g => g,
        },
        auto_ban: row.int_or("auto_ban", 1) as i32,
        test_model: row.text("test_model"),
        priority: row.int("priority"),
        weight: row.int("weight").max(0),
        tag: row.text("tag"),
        setting,
        param_override: json_text(
            &row.text("param_override"),
            &format!("channel {id} param_override"),
            notes,
        ),
        used_quota: Quota(row.int("used_quota")),
        balance: row.float("balance"),
        response_time: row.int("response_time"),
        status,
        other_info,
        created_time: row.int("created_time"),
        test_time: row.int("test_time"),
        balance_updated_time: row.int("balance_updated_time"),
    }
}

/// A redemption code, or `None` for a soft-deleted one.
pub fn redemption(row: &SourceRow, now: i64, notes: &mut Notes) -> Option<Redemption> {
    let id = row.int("id");
    if !row.is_null("deleted_at") {
        notes.add("deleted redemption codes not carried", format!("code {id}"));
        return None;
    }
    let mut status = row.int_or("status", 1) as i32;
    let expires = row.int("expired_time");
    if status == redemptions::STATUS_UNUSED && expires != 0 {
        if expires < now {
            status = redemptions::STATUS_DISABLED;
            notes.add(
                "redemption codes disabled (expired)",
                format!("code {id} ({})", row.text("name")),
            );
        } else {
            notes.add(
                "redemption code expiry not kept (Tollgate's codes do not expire)",
                format!("code {id} ({}): expired_time {expires}", row.text("name")),
            );
        }
    }
    Some(Redemption {
        id: RedemptionId(id),
        name: row.text("name"),
        key: row.text("key"),
        status,
        quota: Quota(row.int("quota")),
        created_time: row.int("created_time"),
        redeemed_time: row.int("redeemed_time"),
        used_user_id: UserId(row.int("used_user_id")),
    })
}

/// A top-up order (`quota_per_unit`: the incumbent's QuotaPerUnit).
pub fn topup(row: &SourceRow, quota_per_unit: f64, notes: &mut Notes) -> TopUp {
    let id = row.int("id");
    let amount = row.int("amount");
    let status = row.text("status");
    let provider = row.text("payment_provider");
    if status == tollgate_storage::topups::STATUS_PENDING
        && !provider.is_empty()
        && provider != "epay"
    {
        notes.add(
            "pending top-ups Tollgate cannot complete (not Epay)",
            format!("order {id} ({}): {provider}", row.text("trade_no")),
        );
    }
    TopUp {
        id: TopUpId(id),
        user_id: UserId(row.int("user_id")),
        amount,
        quota: Quota((amount as f64 * quota_per_unit).round() as i64),
        money_cents: (row.float("money") * 100.0).round() as i64,
        trade_no: row.text("trade_no"),
        payment_method: row.text("payment_method"),
        paid_type: String::new(),
        gateway_trade_no: String::new(),
        status,
        created_time: row.int("create_time"),
        complete_time: row.int("complete_time"),
    }
}

/// A two-factor record, or `None` for a soft-deleted one.
pub fn two_factor(row: &SourceRow, now: i64) -> Option<TwoFactor> {
    if !row.is_null("deleted_at") {
        return None;
    }
    let enabled = row.flag("is_enabled");
    Some(TwoFactor {
        user_id: UserId(row.int("user_id")),
        secret: row.text("secret").trim().to_owned(),
        enabled,
        recovery: Vec::new(),
        last_step: 0,
        created_at: now,
        enabled_at: if enabled { now } else { 0 },
    })
}

/// The opening log row of an imported user: what it had used, so that its used quota has a row.
pub fn opening(user: &User, variant: Variant, now: i64) -> LogEntry {
    LogEntry {
        created_at: now,
        log_type: LOG_SYSTEM,
        user_id: user.id,
        username: user.username.clone(),
        group: user.group.clone(),
        quota: user.used_quota.0,
        content: format!(
            "imported from {}: balance {}, used {}, {} requests",
            variant.name(),
            user.quota.0,
            user.used_quota.0,
            user.request_count
        ),
        other: json!({"import": {
            "source": variant.name(),
            "quota": user.quota.0,
            "used_quota": user.used_quota.0,
            "request_count": user.request_count,
        }})
        .to_string(),
        ..LogEntry::default()
    }
}

/// One of the incumbent's log rows (its id is given anew by Tollgate's log sequence).
pub fn log_row(row: &SourceRow) -> LogEntry {
    let mut other: serde_json::Map<String, Json> =
        serde_json::from_str(&row.text("other")).unwrap_or_default();
    other.insert("imported".into(), json!({"id": row.int("id")}));
    LogEntry {
        created_at: row.int("created_at"),
        log_type: row.int("type") as i32,
        user_id: UserId(row.int("user_id")),
        username: row.text("username"),
        token_id: row.int("token_id"),
        token_name: row.text("token_name"),
        model_name: row.text("model_name"),
        channel_id: row.int("channel_id"),
        group: row.text("group"),
        is_stream: row.flag("is_stream"),
        use_time: row.int("use_time"),
        prompt_tokens: row.int("prompt_tokens"),
        completion_tokens: row.int("completion_tokens"),
        quota: row.int("quota"),
        content: row.text("content"),
        other: Json::Object(other).to_string(),
        request_id: row.text("request_id"),
        ..LogEntry::default()
    }
}

#[cfg(test)]
mod tests {
    use super::super::source::Value;
    use super::*;

    fn t(s: &str) -> Value {
        Value::Text(s.to_owned())
    }

    #[test]
    fn users_keep_their_hash_and_numbers_and_logins_are_not_bound() {
        let row = SourceRow::new()
            .with("id", Value::Int(7))
            .with("username", t("alice"))
            .with("password", t("$2a$10$abcdefghijklmnopqrstuu"))
            .with("quota", Value::Int(1000))
            .with("used_quota", Value::Int(250))
            .with("github_id", t("alice-gh"))
            .with("access_token", t("0123456789abcdef0123456789abcdef"))
            .with("deleted_at", Value::Null);
        let mut notes = Notes::default();
        let (user, credited) = user(&row, 100, None, &mut notes).expect("maps");
        assert_eq!(user.password_hash, "$2a$10$abcdefghijklmnopqrstuu");
        assert_eq!(credited, 1250);
        assert_eq!(user.group, "default");
        assert_eq!(user.github_id, "login:alice-gh", "pending");
        assert!(user.deleted_at.is_none());
        assert_eq!(
            user.access_token_hash.as_deref().map(str::len),
            Some(64),
            "the access token is kept only as its hash"
        );
        assert_eq!(notes.items.len(), 1, "{notes:?}");
        let numeric = SourceRow::new()
            .with("github_id", t("583231"))
            .with("deleted_at", t("2025-01-01 00:00:00"));
        let (user, _) = super::user(&numeric, 100, None, &mut notes).expect("maps");
        assert_eq!(user.github_id, "583231");
        assert_eq!(user.deleted_at, Some(100));
    }

    #[test]
    fn oidc_subjects_get_the_issuer_of_the_imported_configuration() {
        assert_eq!(
            oidc_issuer("https://id.example.com/realms/a/.well-known/openid-configuration")
                .as_deref(),
            Some("https://id.example.com/realms/a")
        );
        assert_eq!(oidc_issuer("https://id.example.com/discovery.json"), None);
        assert_eq!(oidc_issuer(""), None);
        let row = SourceRow::new()
            .with("id", Value::Int(3))
            .with("oidc_id", t("sub-3"));
        let mut notes = Notes::default();
        let (bound, _) = user(&row, 1, Some("https://id.example.com"), &mut notes).expect("maps");
        assert_eq!(bound.oidc_id, "https://id.example.com sub-3");
        assert!(notes.items.is_empty(), "{notes:?}");
        let (unbound, _) = user(&row, 1, None, &mut notes).expect("maps");
        assert_eq!(unbound.oidc_id, "");
        assert_eq!(notes.items.len(), 1, "listed: {notes:?}");
    }

    #[test]
    fn tokens_keep_their_key_and_unreadable_ip_lists_disable_them() {
        let row = SourceRow::new()
            .with("id", Value::Int(3))
            .with("key", t("AbC123"))
            .with("status", Value::Int(1))
            .with("allow_ips", t("10.0.0.0/8\nnot-an-ip"))
            .with("deleted_at", Value::Null);
        let mut notes = Notes::default();
        let token = token(&row, Variant::NewApi, &mut notes).expect("kept");
        assert_eq!(token.key, "AbC123");
        assert_eq!(token.expired_time, -1, "NULL expiry is never");
        assert_eq!(token.status, tokens::STATUS_DISABLED);
        let deleted = row.with("deleted_at", t("2025-01-01"));
        assert!(super::token(&deleted, Variant::NewApi, &mut notes).is_none());
    }

    #[test]
    fn multi_key_channels_keep_disabled_keys_and_unknown_types_are_disabled() {
        let row = SourceRow::new()
            .with("id", Value::Int(2))
            .with("type", Value::Int(1))
            .with("key", t("k-one\nk-two\nk-three"))
            .with(
                "channel_info",
                t(r#"{"is_multi_key":true,"multi_key_status_list":{"1":3},"multi_key_disabled_reason":{"1":"quota"}}"#),
            )
            .with("setting", t(r#"{"proxy":"socks5://127.0.0.1:1080"}"#));
        let mut notes = Notes::default();
        let c = channel(&row, &mut notes);
        assert_eq!(c.key_lines(), vec!["k-one", "k-two", "k-three"]);
        assert_eq!(c.proxy, "socks5://127.0.0.1:1080");
        let disabled = channels::other_info::disabled_keys(&c.other_info);
        assert_eq!(disabled.len(), 1);
        assert_eq!(disabled[0].index, 1);
        assert_eq!(disabled[0].reason, "quota");
        assert_eq!(c.status, channels::STATUS_ENABLED);
        let odd = SourceRow::new()
            .with("id", Value::Int(9))
            .with("type", Value::Int(2));
        assert_eq!(
            channel(&odd, &mut notes).status,
            channels::STATUS_MANUALLY_DISABLED
        );
        assert_eq!(channel_key(r#"["a",{"b":1}]"#), "a\n{\"b\":1}");
    }

    #[test]
    fn shared_emails_stay_with_the_live_user() {
        let mk = |id: i64, deleted: bool| {
            let row = SourceRow::new()
                .with("id", Value::Int(id))
                .with("username", t(&format!("u{id}")))
                .with("email", t("Same@example.com"))
                .with(
                    "deleted_at",
                    if deleted {
                        t("2024-01-01")
                    } else {
                        Value::Null
                    },
                );
            user(&row, 1, None, &mut Notes::default()).expect("maps")
        };
        let mut users = vec![mk(1, true), mk(2, false), mk(3, false)];
        let mut notes = Notes::default();
        dedupe_emails(&mut users, &mut notes);
        let emails: Vec<&str> = users.iter().map(|(u, _)| u.email.as_str()).collect();
        assert_eq!(emails, vec!["", "Same@example.com", ""]);
    }
}
