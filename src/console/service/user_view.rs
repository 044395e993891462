//! How users are shown to the console: every field of spec 01 §3 except secrets.

use serde::Serialize;
use tollgate_storage::users::User;
use tollgate_storage::{Quota, UserId};

/// A user as the console sees it (no password hash, no access-token hash).
#[derive(Debug, Serialize)]
pub struct UserView {
    /// Id.
    pub id: UserId,
    /// Login name.
    pub username: String,
    /// Display name.
    pub display_name: String,
    /// 1 common, 10 admin, 100 root.
    pub role: i32,
    /// 1 enabled, 2 banned.
    pub status: i32,
    /// Email.
    pub email: String,
    /// GitHub binding.
    pub github_id: String,
    /// OIDC binding.
    pub oidc_id: String,
    /// WeChat binding.
    pub wechat_id: String,
    /// Telegram binding.
    pub telegram_id: String,
    /// LinuxDO binding.
    pub linux_do_id: String,
    /// Billing group.
    pub group: String,
    /// Balance.
    pub quota: Quota,
    /// Spent.
    pub used_quota: Quota,
    /// Relayed requests.
    pub request_count: i64,
    /// Invite code.
    pub aff_code: String,
    /// Users invited.
    pub aff_count: i64,
    /// Invite earnings not yet transferred.
    pub aff_quota: Quota,
    /// All invite earnings.
    pub aff_history_quota: Quota,
    /// Inviter id, 0 for none.
    pub inviter_id: i64,
    /// Personal settings (JSON text).
    pub setting: String,
    /// Unix seconds of creation.
    pub created_at: i64,
    /// Unix seconds of deregistration, null while active (new-api's field name).
    #[serde(rename = "DeletedAt")]
    pub deleted_at: Option<i64>,
}

impl From<&User> for UserView {
    fn from(u: &User) -> Self {
        UserView {
            id: u.id,
            username: u.username.clone(),
            display_name: u.display_name.clone(),
            role: u.role,
            status: u.status,
            email: u.email.clone(),
            github_id: u.github_id.clone(),
            oidc_id: u.oidc_id.clone(),
            wechat_id: u.wechat_id.clone(),
            telegram_id: u.telegram_id.clone(),
            linux_do_id: u.linux_do_id.clone(),
            group: u.group.clone(),
            quota: u.quota,
            used_quota: u.used_quota,
            request_count: u.request_count,
            aff_code: u.aff_code.clone(),
            aff_count: u.aff_count,
            aff_quota: u.aff_quota,
            aff_history_quota: u.aff_history_quota,
            inviter_id: u.inviter_id,
            setting: super::personal::setting_for_display(&u.setting),
            created_at: u.created_at,
            deleted_at: u.deleted_at,
        }
    }
}
