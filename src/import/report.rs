//! The import's report: per user, token and channel the source's figures beside the ones
//! Tollgate reads back through its own storage reads (the records the console's lists show),
//! then what was not carried or was changed, and the columns nobody knows.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use tollgate_storage::channels::Channel;
use tollgate_storage::import::{ReadBack, Records};
use tollgate_storage::tokens::Token;
use tollgate_storage::users::User;
use tollgate_storage::{ChannelId, TokenId, UserId};

use super::dsn::Engine;
use super::mapping::{Notes, Variant};

/// One user's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct UserFigures {
    id: UserId,
    username: String,
    quota: i64,
    used: i64,
    credited: i64,
    deleted: bool,
}

/// One token's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenFigures {
    id: TokenId,
    name: String,
    status: i32,
    remain: i64,
    used: i64,
    unlimited: bool,
}

/// One channel's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelFigures {
    id: ChannelId,
    name: String,
    status: i32,
    keys: usize,
    models: usize,
}

fn user_figures(user: &User, credited: i64) -> UserFigures {
    UserFigures {
        id: user.id,
        username: user.username.clone(),
        quota: user.quota.0,
        used: user.used_quota.0,
        credited,
        deleted: user.deleted_at.is_some(),
    }
}

fn token_figures(token: &Token) -> TokenFigures {
    TokenFigures {
        id: token.id,
        name: token.name.clone(),
        status: token.status,
        remain: token.remain_quota.0,
        used: token.used_quota.0,
        unlimited: token.unlimited_quota,
    }
}

fn channel_figures(channel: &Channel) -> ChannelFigures {
    ChannelFigures {
        id: channel.id,
        name: channel.name.clone(),
        status: channel.status,
        keys: channel.key_lines().len(),
        models: channel.model_list().len(),
    }
}

/// The figures of what was read from the source (after mapping).
#[derive(Debug, Default)]
pub struct SourceFigures {
    users: Vec<UserFigures>,
    tokens: Vec<TokenFigures>,
    channels: Vec<ChannelFigures>,
    counts: Vec<(&'static str, usize)>,
}

impl SourceFigures {
    /// The figures of `records`.
    pub fn of(records: &Records) -> SourceFigures {
        SourceFigures {
            users: records
                .users
                .iter()
                .map(|(u, credited)| user_figures(u, *credited))
                .collect(),
            tokens: records.tokens.iter().map(token_figures).collect(),
            channels: records.channels.iter().map(channel_figures).collect(),
            counts: vec![
                ("users", records.users.len()),
                ("tokens", records.tokens.len()),
                ("channels", records.channels.len()),
                ("options", records.options.len()),
                ("redemption codes", records.redemptions.len()),
                ("top-up orders", records.topups.len()),
                ("two-factor users", records.two_factor.len()),
                (
                    "drawing tasks",
                    records
                        .tasks
                        .iter()
                        .filter(|t| t.kind == tollgate_storage::tasks::TaskKind::Midjourney)
                        .count(),
                ),
                (
                    "music and video tasks",
                    records
                        .tasks
                        .iter()
                        .filter(|t| t.kind != tollgate_storage::tasks::TaskKind::Midjourney)
                        .count(),
                ),
            ],
        }
    }

    /// The ids to read back.
    pub fn ids(&self) -> (Vec<UserId>, Vec<TokenId>, Vec<ChannelId>) {
        (
            self.users.iter().map(|u| u.id).collect(),
            self.tokens.iter().map(|t| t.id).collect(),
            self.channels.iter().map(|c| c.id).collect(),
        )
    }
}

/// Every difference between the source and what was read back, plus every broken invariant
/// (quota + used == credited).
pub fn mismatches(source: &SourceFigures, back: &ReadBack) -> Vec<String> {
    let mut out = Vec::new();
    for (want, got) in source.users.iter().zip(&back.users) {
        match got {
            None => out.push(format!("user {}: not found", want.id)),
            Some((u, credited)) => {
                let got = user_figures(u, *credited);
                if &got != want {
                    out.push(format!(
                        "user {}: read back {got:?}, source {want:?}",
                        want.id
                    ));
                }
                if got.quota.checked_add(got.used) != Some(got.credited) {
                    out.push(format!("user {}: quota + used != credited", want.id));
                }
            }
        }
    }
    for (want, got) in source.tokens.iter().zip(&back.tokens) {
        match got.as_ref().map(token_figures) {
            None => out.push(format!("token {}: not found", want.id)),
            Some(got) if &got != want => {
                out.push(format!(
                    "token {}: read back {got:?}, source {want:?}",
                    want.id
                ));
            }
            Some(_) => {}
        }
    }
    for (want, got) in source.channels.iter().zip(&back.channels) {
        match got.as_ref().map(channel_figures) {
            None => out.push(format!("channel {}: not found", want.id)),
            Some(got) if &got != want => {
                out.push(format!(
                    "channel {}: read back {got:?}, source {want:?}",
                    want.id
                ));
            }
            Some(_) => {}
        }
    }
    out
}

fn status_word(status: i32) -> &'static str {
    match status {
        1 => "enabled",
        2 => "disabled",
        3 => "expired/auto-off",
        4 => "exhausted",
        _ => "other",
    }
}

/// The report text.
pub fn render(
    variant: Variant,
    engine: Engine,
    source: &SourceFigures,
    back: Option<&ReadBack>,
    notes: &Notes,
    unknown_columns: &BTreeMap<&'static str, Vec<String>>,
    dry_run: bool,
) -> String {
    let mut out = String::new();
    let verb = if dry_run {
        "DRY RUN: would import"
    } else {
        "imported"
    };
    let _ = writeln!(out, "{verb} from {} ({})", variant.name(), engine.name());
    for (what, n) in &source.counts {
        let _ = writeln!(out, "  {what}: {n}");
    }
    let side = |b: Option<String>| b.unwrap_or_else(|| "-".to_owned());
    let _ = writeln!(
        out,
        "\nusers (source | tollgate): id username quota used credited"
    );
    for (i, u) in source.users.iter().enumerate() {
        let got = back
            .and_then(|b| b.users.get(i))
            .and_then(Option::as_ref)
            .map(|(t, c)| format!("{} {} {c}", t.quota.0, t.used_quota.0));
        let _ = writeln!(
            out,
            "  {} {}{} | {} {} {} | {}",
            u.id,
            u.username,
            if u.deleted { " (deleted)" } else { "" },
            u.quota,
            u.used,
            u.credited,
            side(got)
        );
    }
    let _ = writeln!(
        out,
        "\ntokens (source | tollgate): id name status remaining used"
    );
    for (i, t) in source.tokens.iter().enumerate() {
        let remain = |unlimited: bool, r: i64| {
            if unlimited {
                "unlimited".to_owned()
            } else {
                r.to_string()
            }
        };
        let got = back
            .and_then(|b| b.tokens.get(i))
            .and_then(Option::as_ref)
            .map(|g| {
                format!(
                    "{} {} {}",
                    status_word(g.status),
                    remain(g.unlimited_quota, g.remain_quota.0),
                    g.used_quota.0
                )
            });
        let _ = writeln!(
            out,
            "  {} {} | {} {} {} | {}",
            t.id,
            t.name,
            status_word(t.status),
            remain(t.unlimited, t.remain),
            t.used,
            side(got)
        );
    }
    let _ = writeln!(
        out,
        "\nchannels (source | tollgate): id name status keys models"
    );
    for (i, c) in source.channels.iter().enumerate() {
        let got = back
            .and_then(|b| b.channels.get(i))
            .and_then(Option::as_ref)
            .map(|g| {
                format!(
                    "{} {} {}",
                    status_word(g.status),
                    g.key_lines().len(),
                    g.model_list().len()
                )
            });
        let _ = writeln!(
            out,
            "  {} {} | {} {} {} | {}",
            c.id,
            c.name,
            status_word(c.status),
            c.keys,
            c.models,
            side(got)
        );
    }
    for (topic, lines) in &notes.items {
        let _ = writeln!(out, "\n{topic}:");
        for line in lines {
            let _ = writeln!(out, "  {line}");
        }
    }
    if !unknown_columns.is_empty() {
        let _ = writeln!(out, "\ncolumns this importer does not know (not read):");
        for (table, columns) in unknown_columns {
            let _ = writeln!(out, "  {table}: {}", columns.join(", "));
        }
    }
    out
}
