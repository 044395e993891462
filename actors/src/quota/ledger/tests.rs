use super::*;

const T: TokenId = TokenId(7);

fn billed(charged: i64, balance: i64, token_remain: Option<i64>) -> Option<Billed> {
    Some(Billed {
        charged,
        balance,
        token_remain,
    })
}

#[test]
fn reservations_share_the_balance() {
    let mut l = Ledger::new(100);
    let a = l.reserve(None, 60, 60).expect("first fits");
    assert_eq!(
        l.reserve(None, 50, 50),
        Err(Refusal::UserQuota {
            available: 40,
            needed: 50
        })
    );
    let b = l.reserve(None, 40, 40).expect("exactly the rest");
    assert_eq!(l.settle(a, 30), billed(30, 70, None));
    l.release(b);
    assert_eq!((l.balance(), l.reserved()), (70, 0));
}

#[test]
fn admission_asks_for_the_needed_part_and_holds_the_whole_bound() {
    let mut l = Ledger::new(100);
    // Holds 500 although only 80 must be available.
    let a = l.reserve(None, 500, 80).expect("80 of 100 available");
    assert_eq!(l.reserved(), 500);
    assert!(
        matches!(
            l.reserve(None, 10, 10),
            Err(Refusal::UserQuota {
                available: -400,
                ..
            })
        ),
        "the first request's whole bound is held against the next"
    );
    l.release(a);
    assert_eq!(l.reserved(), 0);
    assert!(
        l.reserve(None, 10, 20).is_ok(),
        "needed never exceeds the amount"
    );
}

#[test]
fn settle_and_release_happen_once() {
    let mut l = Ledger::new(100);
    let a = l.reserve(None, 10, 10).expect("fits");
    assert!(l.settle(a, 10).is_some());
    assert_eq!(l.settle(a, 10), None, "a second settle charges nothing");
    l.release(a);
    assert_eq!((l.balance(), l.reserved()), (90, 0));
}

#[test]
fn charges_are_never_capped_and_a_debt_refuses_until_topped_up() {
    let mut l = Ledger::new(100);
    let a = l.reserve(None, 10, 10).expect("fits");
    let b = l.reserve(None, 30, 30).expect("fits");
    let first = l.settle(a, 500).expect("settled");
    assert_eq!(
        first,
        Billed {
            charged: 500,
            balance: -400,
            token_remain: None
        }
    );
    assert!(first.debt());
    assert_eq!(l.settle(b, 30), billed(30, -430, None));
    assert!(
        matches!(l.reserve(None, 0, 0), Err(Refusal::UserQuota { .. })),
        "a debt refuses even a free request"
    );
    l.adjust(430);
    assert!(
        matches!(l.reserve(None, 0, 0), Err(Refusal::UserQuota { .. })),
        "a balance of exactly zero still refuses"
    );
    l.adjust(1);
    assert!(l.reserve(None, 1, 1).is_ok(), "back above zero");
}

#[test]
fn token_limits_apply_unless_unlimited() {
    let mut l = Ledger::new(1_000);
    l.add_token(T, 50, false, None);
    assert_eq!(
        l.reserve(Some(T), 60, 60),
        Err(Refusal::TokenQuota {
            available: 50,
            needed: 60
        })
    );
    let h = l.reserve(Some(T), 40, 40).expect("fits");
    assert_eq!(l.settle(h, 45), billed(45, 955, Some(5)));
    let h = l.reserve(Some(T), 5, 5).expect("fits");
    let debt = l.settle(h, 25).expect("settled");
    assert_eq!(
        debt,
        Billed {
            charged: 25,
            balance: 930,
            token_remain: Some(-20)
        }
    );
    assert!(debt.debt(), "the key is in debt");
    assert!(matches!(
        l.reserve(Some(T), 0, 0),
        Err(Refusal::TokenQuota { .. })
    ));
    l.set_token_unlimited(T, true);
    let h = l.reserve(Some(T), 500, 500).expect("unlimited token");
    assert_eq!(l.settle(h, 500), billed(500, 430, None));
    assert_eq!(l.token_remain(T), Some(-20), "unlimited tokens keep remain");
}

#[test]
fn adjustments_change_the_balance() {
    let mut l = Ledger::new(0);
    assert!(l.reserve(None, 1, 1).is_err());
    l.adjust(10);
    assert!(l.reserve(None, 10, 10).is_ok());
    l.adjust(i64::MIN);
    assert_eq!(l.balance(), i64::MIN + 10, "saturating, never wrapping");
}

#[test]
fn concurrent_requests_split_the_balance_by_limiting_their_answers() {
    use super::super::output::OutputAsk;
    let ask = OutputAsk {
        prompt_units: 100,
        per_token: 1.0,
        most: 100_000,
        least: 1000,
        lowered_cap: 100_000,
        fixed: false,
        max_units: None,
    };
    let mut l = Ledger::new(10_000);
    let (_, first, held) = l.reserve_output(None, &ask).expect("first");
    assert_eq!((first, held), (9_900, 10_000));
    // Nothing left for a second one.
    assert_eq!(
        l.reserve_output(None, &ask),
        Err(Refusal::UserQuota {
            available: 0,
            needed: 1_100
        })
    );
    // A limited key with less than the user: the key limits.
    let mut l = Ledger::new(10_000);
    l.add_token(T, 3_000, false, None);
    let (_, tokens, held) = l.reserve_output(Some(T), &ask).expect("key covers 2,900");
    assert_eq!((tokens, held), (2_900, 3_000));
    assert!(matches!(
        l.reserve_output(Some(T), &ask),
        Err(Refusal::TokenQuota { available: 0, .. })
    ));
}
