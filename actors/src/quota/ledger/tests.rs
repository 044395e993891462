use super::*;

const T: TokenId = TokenId(7);

#[test]
fn reservations_cannot_overdraw() {
    let mut l = Ledger::new(100);
    let a = l.reserve(None, 60).expect("first fits");
    assert_eq!(
        l.reserve(None, 50),
        Err(Refusal::UserQuota {
            available: 40,
            needed: 50
        })
    );
    let b = l.reserve(None, 40).expect("exactly the rest");
    assert_eq!(
        l.settle(a, 30),
        Some(Billed {
            charged: 30,
            clamped: false
        })
    );
    l.release(b);
    assert_eq!((l.balance(), l.reserved()), (70, 0));
}

#[test]
fn settle_and_release_happen_once() {
    let mut l = Ledger::new(100);
    let a = l.reserve(None, 10).expect("fits");
    assert!(l.settle(a, 10).is_some());
    assert_eq!(l.settle(a, 10), None, "a second settle charges nothing");
    l.release(a);
    assert_eq!((l.balance(), l.reserved()), (90, 0));
}

#[test]
fn charges_are_clamped_so_balances_never_go_negative() {
    let mut l = Ledger::new(100);
    let a = l.reserve(None, 10).expect("fits");
    let b = l.reserve(None, 30).expect("fits");
    // `a` costs far more than reserved; `b`'s 30 must stay covered.
    assert_eq!(
        l.settle(a, 500),
        Some(Billed {
            charged: 70,
            clamped: true
        })
    );
    assert_eq!(
        l.settle(b, 30),
        Some(Billed {
            charged: 30,
            clamped: false
        })
    );
    assert_eq!(l.balance(), 0);
    assert!(
        matches!(l.reserve(None, 0), Err(Refusal::UserQuota { .. })),
        "empty balance refuses"
    );
}

#[test]
fn token_limits_apply_unless_unlimited() {
    let mut l = Ledger::new(1_000);
    l.add_token(T, 50, false);
    assert_eq!(
        l.reserve(Some(T), 60),
        Err(Refusal::TokenQuota {
            available: 50,
            needed: 60
        })
    );
    let h = l.reserve(Some(T), 40).expect("fits");
    assert_eq!(
        l.settle(h, 45),
        Some(Billed {
            charged: 45,
            clamped: false
        })
    );
    assert_eq!(l.token_remain(T), Some(5));
    assert_eq!(l.balance(), 955);
    l.set_token_unlimited(T, true);
    let h = l.reserve(Some(T), 500).expect("unlimited token");
    l.settle(h, 500);
    assert_eq!(
        (l.balance(), l.token_remain(T)),
        (455, Some(5)),
        "unlimited tokens keep remain"
    );
}

#[test]
fn adjustments_change_the_balance() {
    let mut l = Ledger::new(0);
    assert!(l.reserve(None, 1).is_err());
    l.adjust(10);
    assert!(l.reserve(None, 10).is_ok());
    l.adjust(i64::MIN);
    assert_eq!(l.balance(), i64::MIN + 10, "saturating, never wrapping");
}
