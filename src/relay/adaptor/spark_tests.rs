use super::*;

/// The example of "WebSocket协议通用鉴权URL生成说明" (https://xfyun.cn/doc/spark/general_url_authentication.html):
/// APISecret `MjlmNzkzNmZkMDQ2OTc0ZDdmNGE2ZTZi`, APIKey `addd2272b6d8b7c8abdd79531420ca3b`,
/// date `Fri, 05 May 2023 10:43:39 GMT`, `/v1.1/chat` on spark-api.xf-yun.com: the page's
/// signature, authorization and final URL, byte for byte.
#[test]
fn the_documented_signed_url_is_reproduced_byte_for_byte() {
    let key =
        SparkKey::parse("app|MjlmNzkzNmZkMDQ2OTc0ZDdmNGE2ZTZi|addd2272b6d8b7c8abdd79531420ca3b")
            .expect("three parts");
    let date = "Fri, 05 May 2023 10:43:39 GMT";
    let signed =
        "host: spark-api.xf-yun.com\ndate: Fri, 05 May 2023 10:43:39 GMT\nGET /v1.1/chat HTTP/1.1";
    assert_eq!(
        sign::hmac_base64(key.api_secret.as_bytes(), signed.as_bytes()),
        "z5gHdu3pxVV4ADMyk467wOWDQ9q6BQzR3nfMTjc/DaQ="
    );
    let authorization = "YXBpX2tleT0iYWRkZDIyNzJiNmQ4YjdjOGFiZGQ3OTUzMTQyMGNhM2IiLCBhbGdvcml0aG09ImhtYWMtc2hhMjU2IiwgaGVhZGVycz0iaG9zdCBkYXRlIHJlcXVlc3QtbGluZSIsIHNpZ25hdHVyZT0iejVnSGR1M3B4VlY0QURNeWs0Njd3T1dEUTlxNkJRelIzbmZNVGpjL0RhUT0i";
    assert_eq!(
        super::authorization(&key, "spark-api.xf-yun.com", date, "/v1.1/chat"),
        authorization
    );
    let url = signed_url("wss://spark-api.xf-yun.com", "/v1.1/chat", &key, date).expect("url");
    assert_eq!(
        url.as_str(),
        format!(
            "wss://spark-api.xf-yun.com/v1.1/chat?authorization={authorization}&date=Fri%2C+05+May+2023+10%3A43%3A39+GMT&host=spark-api.xf-yun.com"
        )
    );
}

#[test]
fn http_bases_become_websocket_urls_and_the_port_is_signed() {
    let key = SparkKey::parse("a|s|k").expect("key");
    let date = "Fri, 05 May 2023 10:43:39 GMT";
    let url = signed_url("http://127.0.0.1:8080/", "/v3.5/chat", &key, date).expect("url");
    assert_eq!(url.scheme(), "ws");
    assert_eq!(url.path(), "/v3.5/chat");
    let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    assert_eq!(pairs[2], ("host".into(), "127.0.0.1:8080".into()));
    assert_eq!(
        pairs[0].1,
        super::authorization(&key, "127.0.0.1:8080", date, "/v3.5/chat")
    );
    let url = signed_url("https://spark.example", "/v1.1/chat", &key, date).expect("url");
    assert_eq!(url.scheme(), "wss");
    assert!(signed_url("ftp://x", "/v1.1/chat", &key, date).is_err());
}

#[test]
fn keys_need_three_parts() {
    assert!(SparkKey::parse("app|secret|key").is_ok());
    for bad in ["secret|key", "a|b|c|d", "app||key", ""] {
        let e = SparkKey::parse(bad).err().unwrap_or_default();
        assert!(e.contains("APPID|APISecret|APIKey"), "{bad}: {e}");
    }
}

#[test]
fn the_version_comes_from_the_model_then_other_then_v2_1() {
    assert_eq!(version("SparkDesk-v3.5", "v1.1"), "v3.5");
    assert_eq!(version("SparkDesk", "v4.0"), "v4.0");
    assert_eq!(version("spark", " "), "v2.1");
    assert_eq!(version("spark", "a/b"), "v2.1");
    for (v, path, domain) in [
        ("v1.1", "/v1.1/chat", "lite"),
        ("v2.1", "/v2.1/chat", "generalv2"),
        ("v3.1", "/v3.1/chat", "generalv3"),
        ("v3.5", "/v3.5/chat", "generalv3.5"),
        ("v4.0", "/v4.0/chat", "4.0Ultra"),
        ("pro-128k", "/chat/pro-128k", "pro-128k"),
        ("max-32k", "/chat/max-32k", "max-32k"),
        ("v5.0", "/v5.0/chat", "generalv5.0"),
    ] {
        assert_eq!(endpoint(v), (path.to_owned(), domain.to_owned()), "{v}");
    }
}

#[tokio::test]
async fn documented_codes_answer_with_their_statuses() {
    for (code, status) in [
        ("11200", 403),
        ("10015", 401),
        ("11202", 429),
        ("10013", 400),
        ("10012", 502),
    ] {
        let resp = error(code, "m");
        assert_eq!(resp.status().as_u16(), status, "{code}");
        let body: serde_json::Value = resp.json().await.expect("json");
        assert_eq!(body["error"]["code"], code);
    }
}
