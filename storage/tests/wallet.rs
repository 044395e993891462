//! Redemption codes and top-up orders: the one-shot state changes (redeem, complete) happen
//! once, unique keys and trade numbers are enforced, pages are newest first.

use tollgate_storage::redemptions::{self, RedeemRefusal, Redemption};
use tollgate_storage::topups::{self, TopUp};
use tollgate_storage::{Quota, RedemptionId, StorageError, Store, TopUpId, UserId};

fn code(key: &str, status: i32) -> Redemption {
    Redemption {
        id: RedemptionId(0),
        name: "n".into(),
        key: key.into(),
        status,
        quota: Quota(100),
        created_time: 1,
        redeemed_time: 0,
        used_user_id: UserId(0),
    }
}

fn order(user: i64, trade_no: &str) -> TopUp {
    TopUp {
        id: TopUpId(0),
        user_id: UserId(user),
        amount: 1,
        quota: Quota(500_000),
        money_cents: 730,
        trade_no: trade_no.into(),
        payment_method: "alipay".into(),
        paid_type: String::new(),
        gateway_trade_no: String::new(),
        status: topups::STATUS_PENDING.into(),
        created_time: 1,
        complete_time: 0,
    }
}

#[test]
fn a_code_is_redeemed_once_and_invalid_codes_are_deleted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_dir(dir.path()).expect("open");
    store
        .write_blocking(|wtx| {
            redemptions::insert(wtx, code("aaaa", redemptions::STATUS_UNUSED))?;
            redemptions::insert(wtx, code("bbbb", redemptions::STATUS_DISABLED))?;
            redemptions::insert(wtx, code("cccc", redemptions::STATUS_UNUSED))?;
            let dup = redemptions::insert(wtx, code("aaaa", redemptions::STATUS_UNUSED));
            assert!(matches!(dup, Err(StorageError::Duplicate { .. })));
            Ok::<_, StorageError>(())
        })
        .expect("insert");
    let results = store
        .write_blocking(|wtx| {
            Ok::<_, StorageError>([
                redemptions::redeem(wtx, "aaaa", UserId(7), 50)?.map(|c| c.used_user_id),
                redemptions::redeem(wtx, "aaaa", UserId(8), 51)?.map(|c| c.used_user_id),
                redemptions::redeem(wtx, "bbbb", UserId(7), 52)?.map(|c| c.used_user_id),
                redemptions::redeem(wtx, "zzzz", UserId(7), 53)?.map(|c| c.used_user_id),
            ])
        })
        .expect("redeem");
    assert_eq!(
        results,
        [
            Ok(UserId(7)),
            Err(RedeemRefusal::AlreadyUsed),
            Err(RedeemRefusal::Invalid),
            Err(RedeemRefusal::Invalid)
        ]
    );
    let deleted = store
        .write_blocking(redemptions::delete_invalid)
        .expect("delete");
    assert_eq!(deleted, 2, "the used and the disabled code");
    let (left, total) = store
        .read_blocking(|rtx| redemptions::list(rtx, 0, 10))
        .expect("list");
    assert_eq!(total, 1);
    assert_eq!(left[0].key, "cccc");
    let gone = store
        .write_blocking(|wtx| redemptions::redeem(wtx, "aaaa", UserId(7), 60))
        .expect("redeem");
    assert_eq!(
        gone,
        Err(RedeemRefusal::Invalid),
        "its key index went with it"
    );
}

#[test]
fn an_order_completes_once_and_lists_per_user_newest_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_dir(dir.path()).expect("open");
    store
        .write_blocking(|wtx| {
            topups::insert(wtx, order(1, "T1"))?;
            topups::insert(wtx, order(2, "T2"))?;
            topups::insert(wtx, order(1, "T3"))?;
            let dup = topups::insert(wtx, order(3, "T1"));
            assert!(matches!(dup, Err(StorageError::Duplicate { .. })));
            Ok::<_, StorageError>(())
        })
        .expect("insert");
    let (first, second, unknown) = store
        .write_blocking(|wtx| {
            Ok::<_, StorageError>((
                topups::complete(wtx, "T1", "wxpay", "GW1", 9)?,
                topups::complete(wtx, "T1", "wxpay", "GW1", 10)?,
                topups::complete(wtx, "nope", "wxpay", "GW1", 10)?,
            ))
        })
        .expect("complete");
    let first = first.expect("the pending order completes");
    assert_eq!(first.status, topups::STATUS_SUCCESS);
    assert_eq!(
        (first.complete_time, first.paid_type.as_str()),
        (9, "wxpay")
    );
    assert!(second.is_none(), "a replay completes nothing");
    assert!(unknown.is_none());
    let (mine, total) = store
        .read_blocking(|rtx| topups::list_for_user(rtx, UserId(1), 0, 1))
        .expect("list");
    assert_eq!(total, 2);
    assert_eq!(mine[0].trade_no, "T3", "newest first, one per page");
    let (all, total) = store
        .read_blocking(|rtx| topups::list(rtx, 1, 10))
        .expect("list");
    assert_eq!(total, 3);
    assert_eq!(
        all.iter().map(|o| o.trade_no.as_str()).collect::<Vec<_>>(),
        ["T2", "T1"]
    );
    let found = store
        .read_blocking(|rtx| topups::find_by_trade_no(rtx, "T1"))
        .expect("find")
        .expect("order");
    assert_eq!(found.status, topups::STATUS_SUCCESS);
}
