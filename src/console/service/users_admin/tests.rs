use tollgate_storage::users::{ROLE_ADMIN, ROLE_COMMON, ROLE_ROOT, STATUS_DISABLED, User};
use tollgate_storage::{Quota, UserId};

use super::*;

fn user(id: i64, role: i32) -> User {
    User {
        id: UserId(id),
        username: format!("u{id}"),
        display_name: String::new(),
        password_hash: String::new(),
        email: String::new(),
        github_id: String::new(),
        oidc_id: String::new(),
        wechat_id: String::new(),
        telegram_id: String::new(),
        linux_do_id: String::new(),
        group: "default".into(),
        quota: Quota(0),
        used_quota: Quota(0),
        request_count: 0,
        aff_code: String::new(),
        aff_count: 0,
        aff_quota: Quota(0),
        aff_history_quota: Quota(0),
        inviter_id: 0,
        role,
        status: 1,
        access_token_hash: Some("h".into()),
        setting: String::new(),
        created_at: 0,
        deleted_at: None,
    }
}

#[test]
fn admins_act_only_on_lower_roles() {
    let (root, admin, admin2, common) = (
        user(1, ROLE_ROOT),
        user(2, ROLE_ADMIN),
        user(3, ROLE_ADMIN),
        user(4, ROLE_COMMON),
    );
    assert!(may_act_on(&root, &admin));
    assert!(may_act_on(&admin, &common));
    assert!(!may_act_on(&admin, &admin2), "equal level");
    assert!(!may_act_on(&admin, &root), "higher level");
    assert!(!may_act_on(&common, &common));
}

#[test]
fn manage_rules() {
    let (root, admin, common) = (
        user(1, ROLE_ROOT),
        user(2, ROLE_ADMIN),
        user(4, ROLE_COMMON),
    );
    let promoted = apply_manage(&root, &common, ManageAction::Promote, 0).expect("root promotes");
    assert_eq!(promoted.role, ROLE_ADMIN);
    assert!(
        apply_manage(&admin, &common, ManageAction::Promote, 0).is_err(),
        "only root promotes"
    );
    for action in [
        ManageAction::Disable,
        ManageAction::Delete,
        ManageAction::Demote,
    ] {
        assert!(
            apply_manage(&root, &root, action, 0).is_err(),
            "{action:?} on root"
        );
        assert!(
            apply_manage(&admin, &root, action, 0).is_err(),
            "admin {action:?} root"
        );
    }
    let demoted = apply_manage(&root, &admin, ManageAction::Demote, 0).expect("demote admin");
    assert_eq!(demoted.role, ROLE_COMMON);
    let banned = apply_manage(&admin, &common, ManageAction::Disable, 0).expect("ban");
    assert_eq!(banned.status, STATUS_DISABLED);
    assert_eq!(
        apply_manage(&admin, &banned, ManageAction::Enable, 0)
            .expect("unban")
            .status,
        1
    );
    let deleted = apply_manage(&admin, &common, ManageAction::Delete, 42).expect("delete");
    assert_eq!(deleted.deleted_at, Some(42));
    assert_eq!(
        deleted.access_token_hash, None,
        "its access token stops working"
    );
    assert!(
        apply_manage(&root, &deleted, ManageAction::Enable, 0).is_err(),
        "deleted is gone"
    );
}

#[test]
fn search_matches_id_name_display_and_email() {
    let mut u = user(17, ROLE_COMMON);
    u.display_name = "Alice Liddell".into();
    u.email = "alice@wonder.land".into();
    let q = |k: &str, g: &str| SearchQuery {
        keyword: k.into(),
        group: g.into(),
    };
    assert!(matches(&u, &q("17", "")));
    assert!(!matches(&u, &q("2", "")), "no field contains it");
    assert!(matches(&u, &q("1", "")), "substring of the username");
    assert!(matches(&u, &q("U17", "")));
    assert!(matches(&u, &q("liddell", "")));
    assert!(matches(&u, &q("WONDER", "")));
    assert!(matches(&u, &q("", "default")));
    assert!(!matches(&u, &q("alice", "vip")));
}
