//! Unit tests of prices and quota arithmetic.

use super::*;

const RATIO: ModelPricing = ModelPricing::Ratio {
    model: 1.25,
    completion: 4.0,
    cache: 0.5,
};

fn usage(p: i64, c: i64, cached: i64) -> Usage {
    Usage {
        prompt_tokens: p,
        completion_tokens: c,
        cached_tokens: cached,
        ..Usage::default()
    }
}

#[test]
fn ratio_formula() {
    // 1.25 × (1000 + 200 × 4) = 2250
    assert_eq!(charge(RATIO, 1.0, 500_000, usage(1000, 200, 0)), Ok(2250));
    // group ratio 0.8 → 1800
    assert_eq!(charge(RATIO, 0.8, 500_000, usage(1000, 200, 0)), Ok(1800));
    // 400 of 1000 prompt tokens cached at 0.5: 1.25 × (600 + 200 + 800) = 2000
    assert_eq!(charge(RATIO, 1.0, 500_000, usage(1000, 200, 400)), Ok(2000));
    // rounding: 0.075 × (7 + 3 × 4) = 1.425 → 1
    let mini = ModelPricing::Ratio {
        model: 0.075,
        completion: 4.0,
        cache: 1.0,
    };
    assert_eq!(charge(mini, 1.0, 500_000, usage(7, 3, 0)), Ok(1));
    // 0.075 × 30 = 2.25 → 2; × 1.5 group = 3.375 → 3
    assert_eq!(charge(mini, 1.5, 500_000, usage(30, 0, 0)), Ok(3));
}

#[test]
fn cache_writes_cost_more_than_input() {
    // 1000 prompt = 600 plain + 300 read + 100 written:
    // 1.25 × (600 + 300 × 0.5 + 100 × 1.25 + 200 × 4) = 1.25 × 1675 = 2093.75 → 2094
    let u = Usage {
        prompt_tokens: 1000,
        completion_tokens: 200,
        cached_tokens: 300,
        cache_write_5m_tokens: 100,
        ..Usage::default()
    };
    assert_eq!(charge(RATIO, 1.0, 500_000, u), Ok(2094));
}

#[test]
fn one_hour_cache_writes_cost_twice_the_input() {
    // 1000 prompt = 400 plain + 300 read + 100 written for 5 min + 200 written for 1 h:
    // 1.25 × (400 + 300 × 0.5 + 100 × 1.25 + 200 × 2 + 200 × 4) = 1.25 × 1875 = 2343.75
    let u = Usage {
        prompt_tokens: 1000,
        completion_tokens: 200,
        cached_tokens: 300,
        cache_write_5m_tokens: 100,
        cache_write_1h_tokens: 200,
        ..Usage::default()
    };
    assert_eq!(charge(RATIO, 1.0, 500_000, u), Ok(2344));
    // Writes never count for more than the prompt holds: 10 prompt, 50 written for 1 h
    // → all 10 at 2 × = 1.25 × 20 = 25.
    let over = Usage {
        prompt_tokens: 10,
        cache_write_1h_tokens: 50,
        ..Usage::default()
    };
    assert_eq!(charge(RATIO, 1.0, 500_000, over), Ok(25));
}

#[test]
fn minimum_and_zero_rules() {
    let tiny = ModelPricing::Ratio {
        model: 0.001,
        completion: 1.0,
        cache: 1.0,
    };
    assert_eq!(
        charge(tiny, 1.0, 500_000, usage(1, 0, 0)),
        Ok(1),
        "used tokens cost ≥ 1"
    );
    assert_eq!(
        charge(RATIO, 1.0, 500_000, usage(0, 0, 0)),
        Ok(0),
        "no tokens, no charge"
    );
    let free = ModelPricing::Ratio {
        model: 0.0,
        completion: 1.0,
        cache: 1.0,
    };
    assert_eq!(
        charge(free, 1.0, 500_000, usage(100, 100, 0)),
        Ok(0),
        "free models are free"
    );
    assert_eq!(
        charge(RATIO, 0.0, 500_000, usage(100, 100, 0)),
        Ok(0),
        "free groups are free"
    );
    assert_eq!(
        charge(RATIO, 1.0, 500_000, usage(10, 0, 50)),
        Ok(6),
        "cached capped at prompt"
    );
}

#[test]
fn per_call_price() {
    let call = ModelPricing::PerCall { price: 0.04 };
    assert_eq!(charge(call, 1.0, 500_000, usage(0, 0, 0)), Ok(20_000));
    assert_eq!(
        charge(call, 2.0, 500_000, usage(999, 999, 0)),
        Ok(40_000),
        "tokens ignored"
    );
    assert_eq!(
        reservation(
            call,
            1.0,
            500_000,
            10,
            OutputBound::new(Some(100), None, 4096, 1),
            500
        ),
        Ok(Reservation::whole(20_000))
    );
}

#[test]
fn reservation_is_an_upper_bound() {
    // max(300, 500) + 100 × 4 = 900 × 1.25 = 1125
    let asked = OutputBound::new(Some(100), None, 4096, 1);
    assert_eq!(
        reservation(RATIO, 1.0, 500_000, 300, asked, 500),
        Ok(Reservation::whole(1125))
    );
    let reserve = reservation(
        RATIO,
        1.0,
        500_000,
        1000,
        OutputBound::new(Some(200), None, 4096, 1),
        0,
    )
    .expect("reserve");
    let cost = charge(RATIO, 1.0, 500_000, usage(1000, 200, 0)).expect("charge");
    assert!(
        reserve.amount >= cost,
        "a request within max_tokens never costs more than reserved"
    );
}

#[test]
fn without_max_tokens_the_output_is_still_reserved() {
    // No max_tokens, no known model maximum: DefaultOutputReserve (4096) tokens of output.
    // 1.25 × (2000 + 4096 × 4) = 22980.
    let none = OutputBound::new(None, None, 4096, 1);
    assert_eq!(
        none,
        OutputBound {
            tokens: 4096,
            admit: 4096
        }
    );
    assert_eq!(
        reservation(RATIO, 1.0, 500_000, 2000, none, 500),
        Ok(Reservation::whole(22_980))
    );
    // A model that cannot write more than 1000 tokens reserves 1000.
    assert_eq!(OutputBound::new(None, Some(1000), 4096, 1).tokens, 1000);
    assert_eq!(OutputBound::new(None, Some(64_000), 4096, 1).tokens, 4096);
}

#[test]
fn admission_needs_at_most_the_default_reserve_of_a_large_max_tokens() {
    // max_tokens 100,000: all of it is held, but only 4096 tokens of output must be
    // available; the rest, if used, becomes a debt.
    let big = OutputBound::new(Some(100_000), None, 4096, 1);
    assert_eq!(
        big,
        OutputBound {
            tokens: 100_000,
            admit: 4096
        }
    );
    let r = reservation(RATIO, 1.0, 500_000, 1000, big, 0).expect("reserve");
    assert_eq!(r.amount, 501_250, "1.25 × (1000 + 100000 × 4)");
    assert_eq!(r.needed, 21_730, "1.25 × (1000 + 4096 × 4)");
    let small = OutputBound::new(Some(10), None, 4096, 1);
    assert_eq!(
        small,
        OutputBound {
            tokens: 10,
            admit: 10
        }
    );
}

#[test]
fn every_answer_asked_for_is_reserved() {
    // n = 3 answers of at most 100 tokens each: 300 tokens of output are held.
    let three = OutputBound::new(Some(100), None, 4096, 3);
    assert_eq!(
        three,
        OutputBound {
            tokens: 300,
            admit: 300
        }
    );
    // Without max_tokens each answer may reach the default reserve; admission still asks
    // for at most the default reserve of output.
    let open = OutputBound::new(None, None, 4096, 2);
    assert_eq!(open.tokens, 8192);
    assert_eq!(open.admit, 4096);
    // n = 0 or negative counts as one answer; an absurd n is capped.
    assert_eq!(OutputBound::new(Some(10), None, 4096, 0).tokens, 10);
    assert_eq!(
        OutputBound::new(Some(10), None, 4096, 1_000_000).tokens,
        1280
    );
}

#[test]
fn image_calls_follow_n_size_and_quality() {
    assert_eq!(image_calls("dall-e-3", None, None, None), 1.0);
    assert_eq!(
        image_calls("dall-e-3", Some(3), Some("1024x1024"), None),
        3.0
    );
    assert_eq!(
        image_calls("dall-e-3", Some(1), Some("1792x1024"), Some("standard")),
        2.0
    );
    assert_eq!(
        image_calls("dall-e-3", Some(1), Some("1024x1024"), Some("hd")),
        2.0
    );
    assert_eq!(
        image_calls("dall-e-3", Some(2), Some("1024x1792"), Some("hd")),
        6.0
    );
    assert_eq!(image_calls("dall-e-2", Some(4), Some("256x256"), None), 3.2);
    assert_eq!(image_calls("my-image-model", Some(0), None, None), 1.0);
    // dall-e-3 at $0.04, hd 1792: 0.04 × 3 × 500000 = 60000 units per image.
    let call = ModelPricing::PerCall {
        price: 0.04 * image_calls("dall-e-3", Some(1), Some("1792x1024"), Some("hd")),
    };
    assert_eq!(charge(call, 1.0, 500_000, Usage::default()), Ok(60_000));
}

#[test]
fn bad_input_is_an_error_not_a_wrap() {
    assert_eq!(
        charge(RATIO, 1.0, 500_000, usage(-1, 0, 0)),
        Err(PriceError::NegativeTokens)
    );
    let bad = ModelPricing::Ratio {
        model: f64::NAN,
        completion: 1.0,
        cache: 1.0,
    };
    assert_eq!(
        charge(bad, 1.0, 500_000, usage(1, 0, 0)),
        Err(PriceError::InvalidRatio)
    );
    let huge = ModelPricing::Ratio {
        model: 1e300,
        completion: 1.0,
        cache: 1.0,
    };
    assert_eq!(
        charge(huge, 1.0, 500_000, usage(i64::MAX, 0, 0)),
        Err(PriceError::Overflow)
    );
    assert_eq!(
        reservation(
            RATIO,
            -1.0,
            500_000,
            1,
            OutputBound::new(None, None, 1, 1),
            0
        ),
        Err(PriceError::InvalidRatio)
    );
}
