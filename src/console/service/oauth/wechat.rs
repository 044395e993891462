//! WeChat sign-in through a WeChat server (songquanpeng/wechat-server): the user sends the
//! official account a keyword and gets a code; `GET {WeChatServerAddress}/api/wechat/user?code=`
//! with `Authorization: {WeChatServerToken}` answers `{success, message, data: <open id>}`,
//! `data` empty for an unknown or expired code (the project's README, "通过验证码查询用户 ID").

use serde::Deserialize;
use tollgate_storage::users::Provider;

use super::fetch;
use super::link::Identity;
use crate::error::{ConsoleError, ErrorCode};
use crate::state::AppState;

/// Name used in messages.
const NAME: &str = "WeChat server";

#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    success: bool,
    #[serde(default)]
    data: String,
}

/// Looks `code` up on the WeChat server.
pub async fn identity(state: &AppState, code: &str) -> Result<Identity, ConsoleError> {
    let options = state.options.current();
    if !options.flag("WeChatAuthEnabled") {
        return Err(ConsoleError::of(ErrorCode::WechatDisabled));
    }
    let base = options.text("WeChatServerAddress").trim_end_matches('/');
    if base.is_empty() {
        return Err(ConsoleError::of(ErrorCode::WechatNotConfigured));
    }
    let code = code.trim();
    if code.is_empty() {
        return Err(ConsoleError::of(ErrorCode::VerificationCodeRequired));
    }
    let mut url = reqwest::Url::parse(&format!("{base}/api/wechat/user"))
        .map_err(|_| ConsoleError::of(ErrorCode::WechatServerInvalid))?;
    url.query_pairs_mut().append_pair("code", code);
    let answer: Answer = fetch::json(
        state.http.direct().get(url).header(
            reqwest::header::AUTHORIZATION,
            options.text("WeChatServerToken"),
        ),
        NAME,
        "code lookup",
    )
    .await?;
    if !answer.success || answer.data.is_empty() {
        return Err(ConsoleError::of(ErrorCode::VerificationCodeInvalid));
    }
    Ok(Identity {
        provider: Provider::WeChat,
        external_id: answer.data,
        username: String::new(),
        display_name: String::new(),
        verified_email: None,
    })
}
